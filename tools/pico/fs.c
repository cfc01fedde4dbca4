// kilobit's minimal RP2040 port: a flat file table in flash (not littlefs, not MicroPython's
// VFS), with open(), an `os` module and the import hooks (mp_import_stat, mp_reader_new_file).
//
// Layout, shared with emu.mjs (which preloads and reads back files on the host; keep in step):
// flash offsets 0x0A0000..0x200000, the upper 1408 KiB of the Pico's 2 MiB (XIP 0x100A0000),
// in 352 blocks of 4 KiB, the flash's erase sector. Blocks 0-1 hold the table (fs_meta_t): a
// link per block (0 free, 0xFFFF end of a chain, else the next block) and 116 entries of 64
// bytes (path of up to 53 bytes such as "/lib/kbit/rkp.mpy", type, size, first block). Every
// file is a chain of whole blocks, read through XIP as on a real flash filesystem. The table is
// kept in RAM and written back (erase + program) when a written file is closed or flushed and on
// remove/rename/mkdir/rmdir (a file left open is closed when the GC frees it, at the latest at
// a soft reset); data is programmed as it is written. A directory exists when an
// entry of type dir names it or when a path lies below it. Not power-cut safe.
#include <string.h>
#include "py/runtime.h"
#include "py/stream.h"
#include "py/mperrno.h"
#include "py/builtin.h"
#include "py/lexer.h"
#include "py/reader.h"
#include "py/objtuple.h"
#include "py/objstr.h"
#include "genhdr/mpversion.h"
#include "kbport.h"

#define FS_OFF   0x0A0000u
#define FS_XIP   ((const uint8_t *)0x100A0000u)
#define BLK      4096u
#define NBLK     352
#define NENT     116
#define FREE     0x0000u
#define END      0xFFFFu
#define NAMEMAX  53
#define T_FILE   1
#define T_DIR    2
#define FS_MAGIC 0x3146424bu   // 'KBF1'

typedef struct {
    char name[NAMEMAX + 1];
    uint8_t type, pad;
    uint32_t size;
    uint16_t first, pad2;
} fs_ent_t;
typedef struct {
    uint32_t magic, nblk, nent, pad;
    uint16_t next[NBLK];
    fs_ent_t ent[NENT];
} fs_meta_t;
_Static_assert(sizeof(fs_ent_t) == 64, "entry");
_Static_assert(sizeof(fs_meta_t) <= 2 * BLK, "table");

static fs_meta_t meta;
static char cwd[NAMEMAX + 1];
static uint16_t rover = 2;

// A real RP2040 would call the bootrom's flash_range_erase / flash_range_program (from RAM, with
// XIP off and interrupts masked; programs 256-byte pages). Here kbemu's flash-programming
// registers do it, which exist only in the emulator: erase whole sectors, program any bytes.
static void flash_cmd(uint32_t cmd, uint32_t off, const void *src, uint32_t len) {
    KBEMU->flash_off = off;
    KBEMU->flash_src = (uint32_t)src;
    KBEMU->flash_len = len;
    KBEMU->flash_cmd = cmd;
}

static void commit(void) {
    flash_cmd(1, FS_OFF, NULL, 2 * BLK);
    flash_cmd(2, FS_OFF, &meta, sizeof(meta));
}

void kb_fs_load(void) {
    memcpy(&meta, FS_XIP, sizeof(meta));
    strcpy(cwd, "/");
    if (meta.magic != FS_MAGIC || meta.nblk != NBLK || meta.nent != NENT) {
        memset(&meta, 0, sizeof(meta));
        meta.magic = FS_MAGIC;
        meta.nblk = NBLK;
        meta.nent = NENT;
        meta.next[0] = meta.next[1] = END;
        commit();
    }
}

static void fail(int err) {
    mp_raise_OSError(err);
}

// absolute, normalised ("." and ".." resolved, no trailing "/"); false if too long
static bool norm(const char *in, char *out) {
    size_t o = 0;
    for (int pass = in[0] == '/'; pass < 2; pass++) {
        const char *p = pass ? in : cwd;
        while (*p) {
            while (*p == '/') {
                p++;
            }
            const char *s = p;
            while (*p && *p != '/') {
                p++;
            }
            size_t n = p - s;
            if (n == 0 || (n == 1 && s[0] == '.')) {
                continue;
            }
            if (n == 2 && s[0] == '.' && s[1] == '.') {
                while (o > 0 && out[--o] != '/') {
                }
                continue;
            }
            if (o + 1 + n > NAMEMAX) {
                return false;
            }
            out[o++] = '/';
            memcpy(out + o, s, n);
            o += n;
        }
    }
    if (o == 0) {
        out[o++] = '/';
    }
    out[o] = 0;
    return true;
}

static const char *path_arg(mp_obj_t p, char *out) {
    if (!norm(mp_obj_str_get_str(p), out)) {
        fail(MP_EINVAL);
    }
    return out;
}

static int find(const char *p) {
    for (int i = 0; i < NENT; i++) {
        if (meta.ent[i].type && !strcmp(meta.ent[i].name, p)) {
            return i;
        }
    }
    return -1;
}

// e lies below directory p, whose length is len (0 for "/")
static bool below(const fs_ent_t *e, const char *p, size_t len) {
    return e->type && !strncmp(e->name, p, len) && e->name[len] == '/' && e->name[len + 1];
}

static size_t dir_len(const char *p) {
    return p[1] ? strlen(p) : 0;
}

static int kind(const char *p) {
    if (!p[1]) {
        return T_DIR;
    }
    int i = find(p);
    if (i >= 0) {
        return meta.ent[i].type;
    }
    for (int j = 0; j < NENT; j++) {
        if (below(&meta.ent[j], p, strlen(p))) {
            return T_DIR;
        }
    }
    return 0;
}

static int new_entry(const char *p, int type) {
    for (int i = 0; i < NENT; i++) {
        if (!meta.ent[i].type) {
            memset(&meta.ent[i], 0, sizeof(fs_ent_t));
            strcpy(meta.ent[i].name, p);
            meta.ent[i].type = type;
            meta.ent[i].first = END;
            return i;
        }
    }
    fail(MP_ENOSPC);
    return -1;
}

static void free_chain(fs_ent_t *e) {
    for (uint16_t b = e->first; b != END;) {
        uint16_t n = meta.next[b];
        meta.next[b] = FREE;
        b = n;
    }
    e->first = END;
    e->size = 0;
}

// ---- files ----
typedef struct {
    mp_obj_base_t base;
    uint8_t ent, mode;           // mode: 1 read, 2 write, 0 closed
    uint16_t blk, blkno;         // read: block number blkno of the chain; write: the last block
    uint32_t pos;
} fs_file_t;

static uint16_t chain_at(uint16_t b, uint32_t k) {
    while (k-- && b != END) {
        b = meta.next[b];
    }
    return b;
}

static mp_uint_t fs_read(mp_obj_t self_in, void *buf, mp_uint_t size, int *err) {
    fs_file_t *f = MP_OBJ_TO_PTR(self_in);
    if (f->mode != 1) {
        *err = MP_EBADF;
        return MP_STREAM_ERROR;
    }
    const fs_ent_t *e = &meta.ent[f->ent];
    mp_uint_t done = 0;
    while (done < size && f->pos < e->size) {
        uint32_t k = f->pos / BLK, o = f->pos % BLK, n = BLK - o;
        if (k != f->blkno) {
            f->blk = k > f->blkno ? chain_at(f->blk, k - f->blkno) : chain_at(e->first, k);
            f->blkno = k;
        }
        n = MIN(n, MIN(e->size - f->pos, size - done));
        memcpy((uint8_t *)buf + done, FS_XIP + f->blk * BLK + o, n);
        done += n;
        f->pos += n;
    }
    return done;
}

static mp_uint_t fs_write(mp_obj_t self_in, const void *buf, mp_uint_t size, int *err) {
    fs_file_t *f = MP_OBJ_TO_PTR(self_in);
    if (f->mode != 2) {
        *err = MP_EBADF;
        return MP_STREAM_ERROR;
    }
    fs_ent_t *e = &meta.ent[f->ent];
    mp_uint_t done = 0;
    while (done < size) {
        uint32_t o = e->size % BLK, n = MIN(BLK - o, size - done);
        if (o == 0) {  // a fresh block, erased now (its old contents belong to no file)
            uint16_t b = END;
            for (int i = 2; i < NBLK && b == END; i++) {
                if (meta.next[rover] == FREE) {
                    b = rover;
                }
                rover = rover + 1 < NBLK ? rover + 1 : 2;
            }
            if (b == END) {
                *err = MP_ENOSPC;
                return done ? done : MP_STREAM_ERROR;
            }
            meta.next[b] = END;
            flash_cmd(1, FS_OFF + b * BLK, NULL, BLK);
            if (e->first == END) {
                e->first = b;
            } else {
                meta.next[f->blk] = b;
            }
            f->blk = b;
        }
        flash_cmd(2, FS_OFF + f->blk * BLK + o, (const uint8_t *)buf + done, n);
        e->size += n;
        done += n;
    }
    return done;
}

static mp_uint_t fs_ioctl(mp_obj_t self_in, mp_uint_t req, uintptr_t arg, int *err) {
    fs_file_t *f = MP_OBJ_TO_PTR(self_in);
    if (req == MP_STREAM_CLOSE || req == MP_STREAM_FLUSH) {
        if (f->mode == 2) {
            commit();
        }
        if (req == MP_STREAM_CLOSE) {
            f->mode = 0;
        }
        return 0;
    }
    if (req == MP_STREAM_SEEK && f->mode) {
        struct mp_stream_seek_t *s = (struct mp_stream_seek_t *)arg;
        mp_int_t size = meta.ent[f->ent].size;
        if (f->mode == 2) {  // only tell() while writing
            if (s->offset != 0 || s->whence == 0) {
                *err = MP_EINVAL;
                return MP_STREAM_ERROR;
            }
            s->offset = size;
            return 0;
        }
        mp_int_t at = s->offset + (s->whence == 1 ? (mp_int_t)f->pos : s->whence == 2 ? size : 0);
        f->pos = at < 0 ? 0 : at;
        s->offset = f->pos;
        return 0;
    }
    *err = MP_EINVAL;
    return MP_STREAM_ERROR;
}

static const mp_rom_map_elem_t fs_file_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_read), MP_ROM_PTR(&mp_stream_read_obj) },
    { MP_ROM_QSTR(MP_QSTR_readinto), MP_ROM_PTR(&mp_stream_readinto_obj) },
    { MP_ROM_QSTR(MP_QSTR_readline), MP_ROM_PTR(&mp_stream_unbuffered_readline_obj) },
    { MP_ROM_QSTR(MP_QSTR_readlines), MP_ROM_PTR(&mp_stream_unbuffered_readlines_obj) },
    { MP_ROM_QSTR(MP_QSTR_write), MP_ROM_PTR(&mp_stream_write_obj) },
    { MP_ROM_QSTR(MP_QSTR_flush), MP_ROM_PTR(&mp_stream_flush_obj) },
    { MP_ROM_QSTR(MP_QSTR_close), MP_ROM_PTR(&mp_stream_close_obj) },
    { MP_ROM_QSTR(MP_QSTR_seek), MP_ROM_PTR(&mp_stream_seek_obj) },
    { MP_ROM_QSTR(MP_QSTR_tell), MP_ROM_PTR(&mp_stream_tell_obj) },
    { MP_ROM_QSTR(MP_QSTR___enter__), MP_ROM_PTR(&mp_identity_obj) },
    { MP_ROM_QSTR(MP_QSTR___exit__), MP_ROM_PTR(&mp_stream___exit___obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&mp_stream_close_obj) },
};
static MP_DEFINE_CONST_DICT(fs_file_locals, fs_file_locals_table);

static const mp_stream_p_t fs_text_p = { .read = fs_read, .write = fs_write, .ioctl = fs_ioctl,
                                         .is_text = true };
static const mp_stream_p_t fs_bin_p = { .read = fs_read, .write = fs_write, .ioctl = fs_ioctl };
static MP_DEFINE_CONST_OBJ_TYPE(fs_textio_type, MP_QSTR_TextIOWrapper, MP_TYPE_FLAG_ITER_IS_STREAM,
    protocol, &fs_text_p, locals_dict, &fs_file_locals);
static MP_DEFINE_CONST_OBJ_TYPE(fs_fileio_type, MP_QSTR_FileIO, MP_TYPE_FLAG_ITER_IS_STREAM,
    protocol, &fs_bin_p, locals_dict, &fs_file_locals);

// open(path, mode="r"): modes r, w, a with b or t
mp_obj_t mp_builtin_open(size_t n_args, const mp_obj_t *args, mp_map_t *kw) {
    mp_obj_t mode_in = n_args > 1 ? args[1] : MP_OBJ_NEW_QSTR(MP_QSTR_r);
    mp_map_elem_t *m = mp_map_lookup(kw, MP_OBJ_NEW_QSTR(MP_QSTR_mode), MP_MAP_LOOKUP);
    if (m) {
        mode_in = m->value;
    }
    int rw = 0, bin = 0;
    for (const char *s = mp_obj_str_get_str(mode_in); *s; s++) {
        if (*s == 'r' || *s == 'w' || *s == 'a') {
            rw = *s == 'r' ? 1 : *s == 'w' ? 2 : 3;
        } else if (*s == 'b' || *s == 't') {
            bin = *s == 'b';
        } else {
            rw = -1;
            break;
        }
    }
    if (rw <= 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("mode"));
    }
    char p[NAMEMAX + 1];
    path_arg(args[0], p);
    int i = find(p), k = kind(p);
    if (k == T_DIR) {
        fail(MP_EISDIR);
    }
    if (rw == 1 && i < 0) {
        fail(MP_ENOENT);
    }
    if (i < 0) {
        i = new_entry(p, T_FILE);
    } else if (rw == 2) {
        free_chain(&meta.ent[i]);
    }
    fs_file_t *f = mp_obj_malloc_with_finaliser(fs_file_t, bin ? &fs_fileio_type : &fs_textio_type);
    f->ent = i;
    f->mode = rw == 1 ? 1 : 2;
    f->pos = 0;
    f->blkno = 0;
    f->blk = meta.ent[i].first;
    if (rw == 3 && f->blk != END) {
        f->blk = chain_at(f->blk, (meta.ent[i].size - 1) / BLK);
    }
    return MP_OBJ_FROM_PTR(f);
}
MP_DEFINE_CONST_FUN_OBJ_KW(mp_builtin_open_obj, 1, mp_builtin_open);

// ---- import ----
typedef struct {
    uint16_t blk, off;
    uint32_t left;
} fs_reader_t;

static mp_uint_t rd_byte(void *data) {
    fs_reader_t *r = data;
    if (r->left == 0) {
        return MP_READER_EOF;
    }
    if (r->off == BLK) {
        r->blk = meta.next[r->blk];
        r->off = 0;
    }
    r->left--;
    return FS_XIP[r->blk * BLK + r->off++];
}

static void rd_close(void *data) {
    m_del_obj(fs_reader_t, data);
}

void mp_reader_new_file(mp_reader_t *reader, qstr filename) {
    char p[NAMEMAX + 1];
    int i = norm(qstr_str(filename), p) ? find(p) : -1;
    if (i < 0 || meta.ent[i].type != T_FILE) {
        fail(MP_ENOENT);
    }
    fs_reader_t *r = m_new_obj(fs_reader_t);
    r->blk = meta.ent[i].first;
    r->off = 0;
    r->left = meta.ent[i].size;
    reader->data = r;
    reader->readbyte = rd_byte;
    reader->close = rd_close;
}

mp_lexer_t *mp_lexer_new_from_file(qstr filename) {
    mp_reader_t reader;
    mp_reader_new_file(&reader, filename);
    return mp_lexer_new(filename, reader);
}

mp_import_stat_t mp_import_stat(const char *path) {
    char p[NAMEMAX + 1];
    int k = norm(path, p) ? kind(p) : 0;
    return k == T_FILE ? MP_IMPORT_STAT_FILE : k == T_DIR ? MP_IMPORT_STAT_DIR
           : MP_IMPORT_STAT_NO_EXIST;
}

// ---- os ----
static mp_obj_t os_list(size_t n_args, const mp_obj_t *args, bool tuples) {
    char p[NAMEMAX + 1];
    path_arg(n_args ? args[0] : mp_obj_new_str(cwd, strlen(cwd)), p);
    int k = kind(p);
    if (k != T_DIR) {
        fail(k ? MP_ENOTDIR : MP_ENOENT);
    }
    size_t len = dir_len(p);
    mp_obj_list_t *list = MP_OBJ_TO_PTR(mp_obj_new_list(0, NULL));
    for (int i = 0; i < NENT; i++) {
        const fs_ent_t *e = &meta.ent[i];
        if (!below(e, p, len)) {
            continue;
        }
        const char *rest = e->name + len + 1, *slash = strchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
        bool seen = false;
        for (size_t j = 0; j < list->len && !seen; j++) {
            mp_obj_t item = tuples ? mp_obj_subscr(list->items[j], MP_OBJ_NEW_SMALL_INT(0),
                MP_OBJ_SENTINEL) : list->items[j];
            size_t l;
            const char *s = mp_obj_str_get_data(item, &l);
            seen = l == n && !memcmp(s, rest, n);
        }
        if (seen) {
            continue;
        }
        mp_obj_t name = mp_obj_new_str(rest, n);
        if (tuples) {
            bool dir = slash || e->type == T_DIR;
            mp_obj_t t[4] = { name, MP_OBJ_NEW_SMALL_INT(dir ? 0x4000 : 0x8000),
                              MP_OBJ_NEW_SMALL_INT(0), mp_obj_new_int_from_uint(dir ? 0 : e->size) };
            name = mp_obj_new_tuple(4, t);
        }
        mp_obj_list_append(MP_OBJ_FROM_PTR(list), name);
    }
    return MP_OBJ_FROM_PTR(list);
}

static mp_obj_t os_listdir(size_t n_args, const mp_obj_t *args) {
    return os_list(n_args, args, false);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(os_listdir_obj, 0, 1, os_listdir);

static mp_obj_t os_ilistdir(size_t n_args, const mp_obj_t *args) {
    return mp_getiter(os_list(n_args, args, true), NULL);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(os_ilistdir_obj, 0, 1, os_ilistdir);

static mp_obj_t os_stat(mp_obj_t path) {
    char p[NAMEMAX + 1];
    int k = kind(path_arg(path, p)), i = find(p);
    if (!k) {
        fail(MP_ENOENT);
    }
    mp_obj_t t[10];
    for (int j = 0; j < 10; j++) {
        t[j] = MP_OBJ_NEW_SMALL_INT(0);
    }
    t[0] = MP_OBJ_NEW_SMALL_INT(k == T_DIR ? 0x4000 : 0x8000);
    if (k == T_FILE) {
        t[6] = mp_obj_new_int_from_uint(meta.ent[i].size);
    }
    return mp_obj_new_tuple(10, t);
}
static MP_DEFINE_CONST_FUN_OBJ_1(os_stat_obj, os_stat);

static mp_obj_t os_remove(mp_obj_t path) {
    char p[NAMEMAX + 1];
    int i = find(path_arg(path, p)), k = kind(p);
    if (k != T_FILE) {
        fail(k ? MP_EISDIR : MP_ENOENT);
    }
    free_chain(&meta.ent[i]);
    meta.ent[i].type = 0;
    commit();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(os_remove_obj, os_remove);

static mp_obj_t os_mkdir(mp_obj_t path) {
    char p[NAMEMAX + 1];
    if (kind(path_arg(path, p))) {
        fail(MP_EEXIST);
    }
    new_entry(p, T_DIR);
    commit();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(os_mkdir_obj, os_mkdir);

static mp_obj_t os_rmdir(mp_obj_t path) {
    char p[NAMEMAX + 1];
    int k = kind(path_arg(path, p)), i = find(p);
    if (k != T_DIR) {
        fail(k ? MP_ENOTDIR : MP_ENOENT);
    }
    for (int j = 0; j < NENT; j++) {
        if (!p[1] || below(&meta.ent[j], p, strlen(p))) {
            fail(MP_EACCES);  // not empty (1.23's mperrno.h has no ENOTEMPTY)
        }
    }
    meta.ent[i].type = 0;
    commit();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(os_rmdir_obj, os_rmdir);

static mp_obj_t os_rename(mp_obj_t from, mp_obj_t to) {
    char a[NAMEMAX + 1], b[NAMEMAX + 1];
    int ka = kind(path_arg(from, a)), kb = kind(path_arg(to, b)), i = find(a), j = find(b);
    size_t la = strlen(a), lb = strlen(b);
    if (!ka || !a[1]) {
        fail(MP_ENOENT);
    }
    if (ka == T_FILE) {
        if (kb == T_DIR) {
            fail(MP_EISDIR);
        }
        if (j >= 0 && j != i) {
            free_chain(&meta.ent[j]);
            meta.ent[j].type = 0;
        }
        strcpy(meta.ent[i].name, b);
    } else {
        if (kb) {
            fail(MP_EEXIST);
        }
        for (int pass = 0; pass < 2; pass++) {  // check every new path's length, then rename
            for (int k = 0; k < NENT; k++) {
                fs_ent_t *e = &meta.ent[k];
                if (k != i && !below(e, a, la)) {
                    continue;
                }
                if (strlen(e->name) - la + lb > NAMEMAX) {
                    fail(MP_EINVAL);
                }
                if (pass) {
                    memmove(e->name + lb, e->name + la, strlen(e->name) - la + 1);
                    memcpy(e->name, b, lb);
                }
            }
        }
    }
    commit();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(os_rename_obj, os_rename);

static mp_obj_t os_getcwd(void) {
    return mp_obj_new_str(cwd, strlen(cwd));
}
static MP_DEFINE_CONST_FUN_OBJ_0(os_getcwd_obj, os_getcwd);

static mp_obj_t os_chdir(mp_obj_t path) {
    char p[NAMEMAX + 1];
    int k = kind(path_arg(path, p));
    if (k != T_DIR) {
        fail(k ? MP_ENOTDIR : MP_ENOENT);
    }
    strcpy(cwd, p);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(os_chdir_obj, os_chdir);

static mp_obj_t os_statvfs(mp_obj_t path) {
    (void)path;
    int nfree = 0;
    for (int b = 2; b < NBLK; b++) {
        nfree += meta.next[b] == FREE;
    }
    mp_obj_t t[10] = { MP_OBJ_NEW_SMALL_INT(BLK), MP_OBJ_NEW_SMALL_INT(BLK),
                       MP_OBJ_NEW_SMALL_INT(NBLK - 2), MP_OBJ_NEW_SMALL_INT(nfree),
                       MP_OBJ_NEW_SMALL_INT(nfree), MP_OBJ_NEW_SMALL_INT(0),
                       MP_OBJ_NEW_SMALL_INT(0), MP_OBJ_NEW_SMALL_INT(0), MP_OBJ_NEW_SMALL_INT(0),
                       MP_OBJ_NEW_SMALL_INT(NAMEMAX) };
    return mp_obj_new_tuple(10, t);
}
static MP_DEFINE_CONST_FUN_OBJ_1(os_statvfs_obj, os_statvfs);

static mp_obj_t os_sync(void) {
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(os_sync_obj, os_sync);

static const qstr os_uname_fields[] = {
    MP_QSTR_sysname, MP_QSTR_nodename, MP_QSTR_release, MP_QSTR_version, MP_QSTR_machine
};
static MP_DEFINE_STR_OBJ(os_sep, "/");
static MP_DEFINE_STR_OBJ(os_uname_sysname, "rp2");
static MP_DEFINE_STR_OBJ(os_uname_release, "1.23.0");
static MP_DEFINE_STR_OBJ(os_uname_version, MICROPY_GIT_TAG " on " MICROPY_BUILD_DATE);
static MP_DEFINE_STR_OBJ(os_uname_machine, MICROPY_HW_BOARD_NAME " with " MICROPY_HW_MCU_NAME);
static MP_DEFINE_ATTRTUPLE(os_uname_info, os_uname_fields, 5, MP_ROM_PTR(&os_uname_sysname),
    MP_ROM_PTR(&os_uname_sysname), MP_ROM_PTR(&os_uname_release),
    MP_ROM_PTR(&os_uname_version), MP_ROM_PTR(&os_uname_machine));

static mp_obj_t os_uname(void) {
    return MP_OBJ_FROM_PTR(&os_uname_info);
}
static MP_DEFINE_CONST_FUN_OBJ_0(os_uname_obj, os_uname);

static const mp_rom_map_elem_t os_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_os) },
    { MP_ROM_QSTR(MP_QSTR_listdir), MP_ROM_PTR(&os_listdir_obj) },
    { MP_ROM_QSTR(MP_QSTR_ilistdir), MP_ROM_PTR(&os_ilistdir_obj) },
    { MP_ROM_QSTR(MP_QSTR_stat), MP_ROM_PTR(&os_stat_obj) },
    { MP_ROM_QSTR(MP_QSTR_remove), MP_ROM_PTR(&os_remove_obj) },
    { MP_ROM_QSTR(MP_QSTR_rename), MP_ROM_PTR(&os_rename_obj) },
    { MP_ROM_QSTR(MP_QSTR_mkdir), MP_ROM_PTR(&os_mkdir_obj) },
    { MP_ROM_QSTR(MP_QSTR_rmdir), MP_ROM_PTR(&os_rmdir_obj) },
    { MP_ROM_QSTR(MP_QSTR_getcwd), MP_ROM_PTR(&os_getcwd_obj) },
    { MP_ROM_QSTR(MP_QSTR_chdir), MP_ROM_PTR(&os_chdir_obj) },
    { MP_ROM_QSTR(MP_QSTR_statvfs), MP_ROM_PTR(&os_statvfs_obj) },
    { MP_ROM_QSTR(MP_QSTR_sync), MP_ROM_PTR(&os_sync_obj) },
    { MP_ROM_QSTR(MP_QSTR_uname), MP_ROM_PTR(&os_uname_obj) },
    { MP_ROM_QSTR(MP_QSTR_sep), MP_ROM_PTR(&os_sep) },
};
static MP_DEFINE_CONST_DICT(os_globals, os_globals_table);
const mp_obj_module_t kb_os_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&os_globals,
};
MP_REGISTER_MODULE(MP_QSTR_os, kb_os_module);

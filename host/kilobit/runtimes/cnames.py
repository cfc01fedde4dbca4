"""Names an exported header's prefix (`kilobit export --name`) must not take (issue 30).

The prefix N becomes the header's functions (N_init, N_predict, ...), its macros in capitals
(N_DIMS, N_MAX, KB_EXPORT_N_H, ...) and KB_EXPORT_NAME, which kb_export.h pastes into every
function name. So a prefix is refused when it is a C or C++ keyword, when it is itself a macro
that the C library, avr-libc, the Arduino core or the compiler defines (the paste would expand
`linux` to 1), or when one of the macros made from it is one of theirs (`--name int8` makes
INT8_MAX). The prefix is lower case: its macros are then its own image in capitals, so two
prefixes can never share a macro or an include guard (`a` and `A` would).

MACROS is a maintained list: `python -m kilobit.runtimes.cnames` prints it again from the
preprocessors of the toolchains found here (gcc, arm-none-eabi-gcc, avr-gcc for the ATmega328P
and ATtiny2313, avr-g++ over the Arduino core), and tests/test_bad_input_builds.py fails when
a toolchain defines a name the list lacks.
"""
import os
import re
import shutil
import subprocess
import tempfile

C_KEYWORDS = set("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while alignas alignof bool constexpr false nullptr static_assert
thread_local true typeof typeof_unqual asm fortran
""".split())
CXX_KEYWORDS = set("""
and and_eq bitand bitor catch char8_t char16_t char32_t class compl concept const_cast
consteval constinit co_await co_return co_yield decltype delete dynamic_cast explicit export
friend mutable namespace new noexcept not not_eq operator or or_eq private protected public
reflexpr reinterpret_cast requires static_cast template this throw try typeid typename using
virtual wchar_t xor xor_eq
""".split())

#: the suffixes kilobit.runtimes.export puts after the prefix in capitals (NAME_DIMS, ...)
SUFFIXES = ("DIMS", "BITS", "MIN", "MAX", "CAP", "NONE", "FULL", "INVALID", "MEMORY_BYTES",
            "CLASSES", "SCORES", "QUANTIZER", "CHECKPOINTS", "API_ONLY", "WINDOW_SAMPLES",
            "WINDOW_AXES", "WINDOW_READINGS", "KIND_LEARNER", "KIND_CLASSES",
            "KIND_PREDICTOR")

#: {where: names} the prefix cannot be: lower-case macros of each, and the lower-case prefixes
#: P whose P_<suffix> in capitals each defines (printed by scan(); see the module's docstring)
MACROS = {}  # filled below from the maintained text

_MACRO_TEXT = """
the compiler: linux unix
the C library: ^aio_prio_delta ^bc_base ^bc_dim ^bc_scale ^bc_string ^char ^charclass_name
    ^coll_weights ^dbl ^delaytimer ^expr_nest ^filename ^flt ^fopen ^host_name ^int ^int16
    ^int32 ^int64 ^int8 ^int_fast16 ^int_fast32 ^int_fast64 ^int_fast8 ^int_least16 ^int_least32
    ^int_least64 ^int_least8 ^intmax ^intptr ^ldbl ^line ^llong ^login_name ^long ^long_long
    ^mb_cur ^mb_len ^mq_prio ^name ^ngroups ^path ^pthread_keys ^pthread_stack ^ptrdiff ^rand
    ^re_dup ^rtsig ^schar ^sem_value ^shrt ^sig_atomic ^sigev ^size ^ssize ^tmp ^tty_name ^uchar
    ^uint ^uint16 ^uint32 ^uint64 ^uint8 ^uint_fast16 ^uint_fast32 ^uint_fast64 ^uint_fast8
    ^uint_least16 ^uint_least32 ^uint_least64 ^uint_least8 ^uintmax ^uintptr ^ullong ^ulong
    ^ulong_long ^ushrt ^wchar ^wint ^xattr_list ^xattr_name ^xattr_size alloca and and_eq assert
    be16toh be32toh be64toh bitand bitor bool clearerr clearerr_unlocked compl errno false
    fast_putc fd_set feof feof_unlocked ferror ferror_unlocked fpclassify fropen fwopen
    getchar_unlocked htobe16 htobe32 htobe64 htole16 htole32 htole64 isalnum isalnum_l isalpha
    isalpha_l isascii isascii_l isblank isblank_l iscntrl iscntrl_l isdigit isdigit_l isfinite
    isgraph isgraph_l isgreater isgreaterequal isinf isless islessequal islessgreater islower
    islower_l isnan isnormal isprint isprint_l ispunct ispunct_l isspace isspace_l isunordered
    isupper isupper_l isxdigit isxdigit_l le16toh le32toh le64toh log2 math_errhandling not
    not_eq offsetof or or_eq physadr putchar_unlocked quad sa_handler sa_sigaction setjmp
    si_addr si_addr_lsb si_arch si_band si_call_addr si_fd si_int si_lower si_overrun si_pid
    si_pkey si_ptr si_status si_stime si_syscall si_timerid si_uid si_upper si_utime si_value
    sigaddset sigdelset sigemptyset sigev_notify_attributes sigev_notify_function sigfillset
    sigismember sigmask signbit signgam sigsetjmp stderr stdin stdout strtodf toascii toascii_l
    tolower toupper true tzname va_arg va_copy va_end va_start xor xor_eq
avr-libc: ^random abs acosf asinf atan2f atanf bit_is_clear bit_is_set cbrtf ceilf clearerror
    cli copysignf cosf coshf eeprom_busy_wait eeprom_is_ready expf fabsf fdev_close
    fdev_get_udata fdev_set_udata fdev_setup_stream fdimf floorf fmaf fmaxf fminf fmodf frexpf
    getc getchar hypotf isfinitef isinff isnanf labs ldexpf log10f logf loop_until_bit_is_clear
    loop_until_bit_is_set lrintf lroundf pgm_get_far_address pgm_read_byte pgm_read_byte_near
    pgm_read_dword pgm_read_dword_near pgm_read_float pgm_read_float_near pgm_read_ptr
    pgm_read_ptr_near pgm_read_word pgm_read_word_near powf putc putchar reti roundf sei
    set_sleep_mode signbitf sinf sinhf sleep_bod_disable sleep_cpu sleep_disable sleep_enable
    sleep_mode squaref tanf tanhf truncf wdt_reset
the Arduino core: bit constrain degrees interrupts max min radians round sq word
"""

for _part in filter(None, re.split(r"\n(?=\S)", _MACRO_TEXT.strip())):  # indented: more
    _where, _names = _part.split(":", 1)
    MACROS[_where.strip()] = set(_names.split())

#: upper-case names the issue met, kept for a precise sentence (every upper-case prefix is
#: refused anyway)
KNOWN_UPPER = {
    "the C library": "NULL EOF BUFSIZ CHAR_BIT INT8_MAX INT16_MAX INT32_MAX UINT8_MAX "
                     "UINT16_MAX INT_MAX SIZE_MAX RAND_MAX EXIT_SUCCESS EXIT_FAILURE",
    "the compiler": "AVR",
    "avr-libc": "PORTB PORTC PORTD DDRB DDRC DDRD PINB PINC PIND SREG SP SPL SPH RAMEND E2END "
                "PROGMEM F_CPU UDR0 EEPROM",
    "the Arduino core": "HIGH LOW INPUT OUTPUT INPUT_PULLUP LED_BUILTIN A0 PI SERIAL DEC HEX",
}


def why_reserved(name):
    """Why `name` cannot be a prefix (a sentence's ending), or None."""
    if name in C_KEYWORDS:
        return "it is a C keyword"
    if name in CXX_KEYWORDS:
        return "it is a C++ keyword"
    for where, names in KNOWN_UPPER.items():
        if name in names.split():
            return "it is a macro of %s" % where
    for where, names in MACROS.items():
        if name in names:
            return "it is a macro of %s" % where
    for where, names in MACROS.items():
        if "^" + name in names:
            return "%s defines a macro %s_... that its header would define again" % (
                where, name.upper())
    return None


def _macros(cmd, text):
    """Names a preprocessor command defines after `text` (-dM)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "names.c" if "g++" not in cmd[0] else "names.cpp")
        with open(src, "w") as f:
            f.write(text)
        p = subprocess.run(cmd + ["-dM", "-E", src], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr[-500:]))
    return {ln.split()[1].split("(")[0] for ln in p.stdout.splitlines() if ln.startswith("#define")}


C_HEADERS = ("assert ctype errno float inttypes iso646 limits locale math setjmp signal stdarg "
             "stdbool stddef stdint stdio stdlib string time").split()
AVR_HEADERS = ("avr/io avr/pgmspace avr/eeprom avr/interrupt avr/sleep avr/wdt "
               "util/delay").split()
ARDUINO = "/usr/share/arduino/hardware/arduino/avr"


def scan():
    """{where: names} from the toolchains found here (MACROS' format); what is missing is left
    out, so run it where all are installed."""
    inc = "".join("#include <%s.h>\n" % h for h in C_HEADERS)
    avr = inc + "".join("#include <%s.h>\n" % h for h in AVR_HEADERS)
    found = {"the C library": set(), "the compiler": set(), "avr-libc": set(),
             "the Arduino core": set()}
    for cc, flags in (("gcc", []), ("arm-none-eabi-gcc", ["-mcpu=cortex-m0plus", "-mthumb"])):
        if shutil.which(cc):
            found["the compiler"] |= _macros([cc, "-std=gnu99"] + flags, "")
            found["the C library"] |= _macros([cc, "-std=gnu99"] + flags, inc)
    if shutil.which("avr-gcc"):
        for mcu in ("atmega328p", "attiny2313"):
            cmd = ["avr-gcc", "-mmcu=" + mcu, "-std=gnu99", "-DF_CPU=16000000UL"]
            found["the compiler"] |= _macros(cmd, "")
            found["avr-libc"] |= _macros(cmd, avr)
    if shutil.which("avr-g++") and os.path.isdir(ARDUINO):
        found["the Arduino core"] |= _macros(
            ["avr-g++", "-mmcu=atmega328p", "-DF_CPU=16000000UL", "-DARDUINO=10807",
             "-DARDUINO_AVR_UNO", "-DARDUINO_ARCH_AVR", "-I" + ARDUINO + "/cores/arduino",
             "-I" + ARDUINO + "/variants/standard"], "#include <Arduino.h>\n")
    order = ["the compiler", "the C library", "avr-libc", "the Arduino core"]
    out, seen = {}, set()
    for where in order:
        names = set()
        for m in found[where]:
            if re.match(r"[a-z][a-z0-9_]*\Z", m):
                names.add(m)
            for s in SUFFIXES:
                if m.endswith("_" + s) and re.match(r"[A-Z][A-Z0-9_]*\Z", m[:-len(s) - 1]):
                    names.add("^" + m[:-len(s) - 1].lower())
        out[where] = names - seen
        seen |= names
    return out


def text(found):
    """MACROS' maintained text for scan()'s result."""
    import textwrap
    lines = []
    for where, names in found.items():
        lines += textwrap.wrap("%s: %s" % (where, " ".join(sorted(names))), 96,
                               subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join(lines)


if __name__ == "__main__":
    print(text(scan()))

/*
 * kb_predictor_fw.h - a host-trained predictor (Bonsai, ProtoNN) whose model is the payload
 * array of a header generated from a model file (kilobit.models.predictor.header: kb_fw_payload,
 * KB_FW_PAYLOAD_LEN, KB_FW_MODEL_TYPE), behind one set of names for either type. The UART
 * firmware (avr/predict_stream.c) and an exported model (kb_export.h) both drive it through
 * these, so neither names the model type again.
 */
#ifndef KB_PREDICTOR_FW_H
#define KB_PREDICTOR_FW_H

#ifndef KB_FW_MODEL_TYPE
#error "include a model header first (kilobit.models.predictor.header)"
#endif

#if KB_FW_MODEL_TYPE == 3
#include "kb_bonsai.h"
typedef kb_bonsai_t kb_fw_model_t;
#define KB_FW_INIT(m) kb_bonsai_init((m), kb_fw_payload, KB_FW_PAYLOAD_LEN, 0)
#define KB_FW_UPDATE_RUN(m, j, c, n) kb_bonsai_update_run((m), (j), (c), (n))
#define KB_FW_PREDICT(m) kb_bonsai_predict(m)
#elif KB_FW_MODEL_TYPE == 4
#define KB_PROTONN_NO_FIELDS /* D and k: 6 bytes a prototype; the reply leaves them out */
#include "kb_protonn.h"
typedef kb_protonn_t kb_fw_model_t;
#define KB_FW_INIT(m) kb_protonn_init((m), kb_fw_payload, KB_FW_PAYLOAD_LEN, 0)
#define KB_FW_UPDATE_RUN(m, j, c, n) kb_protonn_update_run((m), (j), (c), (n))
#define KB_FW_PREDICT(m) kb_protonn_predict(m)
#else
#error "unknown KB_FW_MODEL_TYPE"
#endif
/* both types stream their input through the same projection (kb_proj.h) */
#define KB_FW_DIMS(m) ((m)->proj.dims)
#define KB_FW_TOP(m) ((m)->proj.top)
#define KB_FW_NEXT(m) ((m)->proj.next)

#endif /* KB_PREDICTOR_FW_H */

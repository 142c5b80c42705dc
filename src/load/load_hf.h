/* The Hugging Face folder and FastFlowLM q4nx pack reader (load_hf.c). */
#ifndef TS_LOAD_LOAD_HF_H
#define TS_LOAD_LOAD_HF_H
#include "load/model.h"

/* A Hugging Face folder (weights_file NULL: the folder's safetensors; else that one file, with the
 * config and tokenizer of its folder). quant: NULL, or "q8_0" / "q4_0" to re-encode the matrices. */
int load_hf_model(ts_model *m, const char *dir, const char *weights_file, const char *quant,
                  ts_error *err);

#endif

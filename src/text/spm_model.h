/* A vocabulary from a SentencePiece tokenizer.model (spm_model.c). */
#ifndef TS_TEXT_SPM_MODEL_H
#define TS_TEXT_SPM_MODEL_H
#include "text/vocab.h"

/* Reads a SentencePiece tokenizer.model (protobuf ModelProto; BPE model type only): pieces, scores
 * and types, unk/bos/eos/pad ids from the trainer spec, add_space_prefix from the normalizer's
 * add_dummy_prefix; add_bos true, as for a GGUF "llama" vocabulary. Errors name the file. */
int spm_model_read(const char *path, vocab *out, ts_error *err);

#endif

/* SentencePiece tokenizer.model files: a protobuf ModelProto holding the pieces (string, score,
 * type), a TrainerSpec (model type, special ids) and a NormalizerSpec (dummy prefix). Only the
 * fields tessera needs are read; every other field is skipped by its wire type. The result is the
 * same vocabulary llama.cpp's converter writes into a GGUF as tokenizer.ggml.* for such a model.
 *
 * Protobuf wire format: a message is a sequence of (tag, value); tag = field_number << 3 | wire_type,
 * a varint. Wire types: 0 varint, 1 fixed 64-bit, 2 length-delimited (varint length, then bytes),
 * 5 fixed 32-bit. Varints are little-endian base-128, at most 10 bytes for 64 bits. */
#include "text/spm_model.h"
#include "core/utf8.h"
#include "io/json.h"
#include "io/file.h"
#include "core/error.h"
#include "core/str.h"
#include <stdlib.h>
#include <string.h>

enum wire_type { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2, WIRE_FIXED32 = 5 };

/* Field numbers (sentencepiece_model.proto). */
enum {
    MODEL_PIECES = 1, MODEL_TRAINER_SPEC = 2, MODEL_NORMALIZER_SPEC = 3,
    PIECE_TEXT = 1, PIECE_SCORE = 2, PIECE_TYPE = 3,
    TRAINER_MODEL_TYPE = 3, TRAINER_UNK_ID = 40, TRAINER_BOS_ID = 41, TRAINER_EOS_ID = 42,
    TRAINER_PAD_ID = 43,
    NORMALIZER_ADD_DUMMY_PREFIX = 3
};

/* SentencePiece's enums. Its piece types (NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, UNUSED 5,
 * BYTE 6) are numbered exactly as GGUF's token types, which were taken from them. */
enum { SP_NORMAL = 1, SP_UNKNOWN = 2, SP_CONTROL = 3, SP_USER_DEFINED = 4, SP_UNUSED = 5, SP_BYTE = 6 };
enum { SP_UNIGRAM = 1, SP_BPE = 2, SP_WORD = 3, SP_CHAR = 4 };

/* A read position inside one message; offsets in errors count from the start of the file. */
typedef struct pb_reader {
    const uint8_t *pos, *end;
    const uint8_t *file;       /* start of the file, for byte offsets in messages */
    const char *path;
    const char *where;         /* which message is being read, for messages */
    ts_error *err;
} pb_reader;

typedef struct pb_field {
    uint32_t number;
    int wire;
    uint64_t varint;           /* WIRE_VARINT */
    const uint8_t *data;       /* WIRE_BYTES / fixed: the payload */
    size_t len;
} pb_field;

static int pb_fail(const pb_reader *r, const uint8_t *at, const char *problem) {
    return ts_fail(r->err, "%s: byte %zu: %s in %s (not a SentencePiece tokenizer.model?)", r->path,
                   (size_t)(at - r->file), problem, r->where);
}

static int read_varint(pb_reader *r, uint64_t *out) {
    const uint8_t *start = r->pos;
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
        if (r->pos == r->end) return pb_fail(r, start, "truncated varint");
        uint8_t b = *r->pos++;
        /* the 10th byte may only carry bit 63: more bytes, or more bits, overflow 64 bits */
        if (shift == 63 && b > 1) return pb_fail(r, start, "varint longer than 64 bits");
        value |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) { *out = value; return 0; }
    }
}

/* Reads the next (tag, value) of the message; the caller checks r->pos < r->end first. */
static int read_field(pb_reader *r, pb_field *f) {
    const uint8_t *start = r->pos;
    uint64_t tag;
    if (read_varint(r, &tag)) return -1;
    if (tag > 0xffffffffu || (tag >> 3) == 0) return pb_fail(r, start, "invalid field tag");
    f->number = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    f->varint = 0;
    f->data = NULL;
    f->len = 0;
    size_t left;
    switch (f->wire) {
    case WIRE_VARINT:
        return read_varint(r, &f->varint);
    case WIRE_FIXED64:
    case WIRE_FIXED32:
        f->len = f->wire == WIRE_FIXED64 ? 8 : 4;
        if ((size_t)(r->end - r->pos) < f->len) return pb_fail(r, start, "truncated fixed-size field");
        f->data = r->pos;
        r->pos += f->len;
        return 0;
    case WIRE_BYTES: {
        uint64_t len;
        if (read_varint(r, &len)) return -1;
        left = (size_t)(r->end - r->pos);
        if (len > left) return pb_fail(r, start, "length runs past the end");
        f->data = r->pos;
        f->len = (size_t)len;
        r->pos += f->len;
        return 0;
    }
    default:            /* 3/4 are the long-deprecated groups, 6/7 do not exist */
        return pb_fail(r, start, "unsupported wire type");
    }
}

/* A known field with the wrong wire type is a broken file rather than something to skip. */
static int expect_wire(const pb_reader *r, const pb_field *f, int wire) {
    if (f->wire == wire) return 0;
    return ts_fail(r->err, "%s: field %u of %s has wire type %d, expected %d", r->path, f->number,
                   r->where, f->wire, wire);
}

static pb_reader sub_reader(const pb_reader *parent, const pb_field *f, const char *where) {
    pb_reader r = *parent;
    r.pos = f->data;
    r.end = f->data + f->len;
    r.where = where;
    return r;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---------------------------------------------------------------------------------------------- */
/* the three messages                                                                               */

typedef struct spm_settings {
    int64_t model_type;
    int64_t unk_id, bos_id, eos_id, pad_id;
    bool add_dummy_prefix;
} spm_settings;

/* int32 fields arrive as 64-bit varints (negative ones sign-extended to ten bytes). */
static int varint_int32(const pb_reader *r, const pb_field *f, int64_t *out) {
    int64_t v = (int64_t)f->varint;
    if (v < INT32_MIN || v > INT32_MAX)
        return ts_fail(r->err, "%s: field %u of %s is not an int32", r->path, f->number, r->where);
    *out = v;
    return 0;
}

static int read_trainer_spec(pb_reader r, spm_settings *s) {
    while (r.pos < r.end) {
        pb_field f;
        if (read_field(&r, &f)) return -1;
        int64_t *target = NULL;
        switch (f.number) {
        case TRAINER_MODEL_TYPE: target = &s->model_type; break;
        case TRAINER_UNK_ID: target = &s->unk_id; break;
        case TRAINER_BOS_ID: target = &s->bos_id; break;
        case TRAINER_EOS_ID: target = &s->eos_id; break;
        case TRAINER_PAD_ID: target = &s->pad_id; break;
        default: continue;
        }
        if (expect_wire(&r, &f, WIRE_VARINT) || varint_int32(&r, &f, target)) return -1;
    }
    return 0;
}

static int read_normalizer_spec(pb_reader r, spm_settings *s) {
    while (r.pos < r.end) {
        pb_field f;
        if (read_field(&r, &f)) return -1;
        if (f.number != NORMALIZER_ADD_DUMMY_PREFIX) continue;
        if (expect_wire(&r, &f, WIRE_VARINT)) return -1;
        s->add_dummy_prefix = f.varint != 0;
    }
    return 0;
}

static uint8_t token_attr_of(int64_t sp_type) {
    switch (sp_type) {
    case SP_NORMAL: return TOKEN_NORMAL;
    case SP_UNKNOWN: return TOKEN_UNKNOWN;
    case SP_CONTROL: return TOKEN_CONTROL;
    case SP_USER_DEFINED: return TOKEN_USER_DEFINED;
    case SP_BYTE: return TOKEN_BYTE;
    case SP_UNUSED: return TOKEN_UNUSED;
    default: return TOKEN_UNDEFINED;
    }
}

/* Piece `id` into v->text/len/score/attr. */
static int read_piece(pb_reader r, int id, vocab *v) {
    const uint8_t *start = r.pos;
    const uint8_t *text = NULL;
    size_t len = 0;
    float score = 0.0f;
    int64_t type = SP_NORMAL;
    while (r.pos < r.end) {
        pb_field f;
        if (read_field(&r, &f)) return -1;
        switch (f.number) {
        case PIECE_TEXT:
            if (expect_wire(&r, &f, WIRE_BYTES)) return -1;
            text = f.data;
            len = f.len;
            break;
        case PIECE_SCORE: {
            if (expect_wire(&r, &f, WIRE_FIXED32)) return -1;
            uint32_t bits = le32(f.data);
            memcpy(&score, &bits, sizeof score);
            break;
        }
        case PIECE_TYPE:
            if (expect_wire(&r, &f, WIRE_VARINT)) return -1;
            type = (int64_t)f.varint;
            break;
        default:
            break;
        }
    }
    size_t bad;
    if (!text || len == 0)
        return ts_fail(r.err, "%s: byte %zu: piece %d is empty", r.path, (size_t)(start - r.file), id);
    if (len > 0xffff)   /* SentencePiece pieces are short; this bounds len and the hash work */
        return ts_fail(r.err, "%s: piece %d is %zu bytes long", r.path, id, len);
    if (!utf8_valid((const char *)text, len, &bad))
        return ts_fail(r.err, "%s: piece %d is not valid UTF-8 (byte %zu of the piece)", r.path, id, bad);
    if (score != score) return ts_fail(r.err, "%s: piece %d has a NaN score", r.path, id);
    uint8_t attr = token_attr_of(type);
    if (attr == TOKEN_UNDEFINED)
        return ts_fail(r.err, "%s: piece %d has unknown type %lld", r.path, id, (long long)type);

    if (!(v->text[id] = str_copy(text, len))) return ts_fail(r.err, "%s: out of memory", r.path);
    v->len[id] = (uint32_t)len;
    v->score[id] = score;
    v->attr[id] = attr;
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */

static const char *model_type_name(int64_t t) {
    switch (t) {
    case SP_UNIGRAM: return "UNIGRAM";
    case SP_BPE: return "BPE";
    case SP_WORD: return "WORD";
    case SP_CHAR: return "CHAR";
    default: return "unknown";
    }
}

/* A special id from the trainer spec: negative means "none"; past the vocabulary is an error. */
static int special_id(const char *path, const char *name, int64_t id, int n, int32_t *out,
                      ts_error *err) {
    if (id < 0) { *out = -1; return 0; }
    if (id >= n)
        return ts_fail(err, "%s: trainer_spec.%s = %lld is outside the vocabulary (%d pieces)", path,
                       name, (long long)id, n);
    *out = (int32_t)id;
    return 0;
}

static int parse_model(const char *path, const uint8_t *data, size_t size, vocab *v, ts_error *err) {
    if (size == 0) return ts_fail(err, "%s: empty file (expected a SentencePiece tokenizer.model)", path);
    pb_reader top = { data, data + size, data, path, "ModelProto", err };

    /* Pass 1: walk the top level, count pieces and read the two specs. */
    spm_settings s = { .model_type = SP_UNIGRAM, .unk_id = 0, .bos_id = 1, .eos_id = 2, .pad_id = -1,
                       .add_dummy_prefix = true };
    size_t n_pieces = 0;
    pb_reader r = top;
    while (r.pos < r.end) {
        pb_field f;
        if (read_field(&r, &f)) return -1;
        switch (f.number) {
        case MODEL_PIECES:
            if (expect_wire(&r, &f, WIRE_BYTES)) return -1;
            n_pieces++;
            break;
        case MODEL_TRAINER_SPEC:
            if (expect_wire(&r, &f, WIRE_BYTES) ||
                read_trainer_spec(sub_reader(&r, &f, "TrainerSpec"), &s))
                return -1;
            break;
        case MODEL_NORMALIZER_SPEC:
            if (expect_wire(&r, &f, WIRE_BYTES) ||
                read_normalizer_spec(sub_reader(&r, &f, "NormalizerSpec"), &s))
                return -1;
            break;
        default:
            break;
        }
    }
    if (n_pieces == 0) return ts_fail(err, "%s: no pieces (not a SentencePiece tokenizer.model?)", path);
    if (n_pieces > 0x7fffffff) return ts_fail(err, "%s: %zu pieces", path, n_pieces);
    /* tessera's encoder merges by score, which reproduces SentencePiece's BPE but not the Viterbi
     * search of a unigram model; an absent model_type means UNIGRAM (the proto default). */
    if (s.model_type != SP_BPE)
        return ts_fail(err, "%s: SentencePiece model type %s (%lld) is not supported, only BPE", path,
                       model_type_name(s.model_type), (long long)s.model_type);

    v->kind = VOCAB_SPM;
    v->text = calloc(n_pieces, sizeof *v->text);
    v->len = calloc(n_pieces, sizeof *v->len);
    v->score = calloc(n_pieces, sizeof *v->score);
    v->attr = calloc(n_pieces, sizeof *v->attr);
    if (!v->text || !v->len || !v->score || !v->attr) return ts_fail(err, "%s: out of memory", path);
    v->n = (int)n_pieces;

    /* Pass 2: the pieces, in id order. The structure was checked by pass 1. */
    r = top;
    int id = 0;
    while (r.pos < r.end) {
        pb_field f;
        if (read_field(&r, &f)) return -1;
        if (f.number != MODEL_PIECES) continue;
        if (read_piece(sub_reader(&r, &f, "SentencePiece"), id, v)) return -1;
        id++;
    }
    if (vocab_build_hash(v, err)) return -1;

    if (special_id(path, "unk_id", s.unk_id, v->n, &v->unk, err) ||
        special_id(path, "bos_id", s.bos_id, v->n, &v->bos, err) ||
        special_id(path, "eos_id", s.eos_id, v->n, &v->eos, err) ||
        special_id(path, "pad_id", s.pad_id, v->n, &v->pad, err))
        return -1;
    vocab_find_eot(v);
    /* as vocab_from_gguf for a "llama" vocabulary without add_* keys */
    v->add_bos = true;
    v->add_eos = false;
    v->add_space_prefix = s.add_dummy_prefix;
    return 0;
}

int spm_model_read(const char *path, vocab *out, ts_error *err) {
    char *data;
    size_t size;
    if (file_read(path, &data, &size, err)) return -1;
    vocab v;
    memset(&v, 0, sizeof v);
    v.bos = v.eos = v.eot = v.unk = v.pad = -1;
    int rc = parse_model(path, (const uint8_t *)data, size, &v, err);
    free(data);
    if (rc) { vocab_free(&v); return -1; }
    *out = v;
    return 0;
}

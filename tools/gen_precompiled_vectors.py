#!/usr/bin/env python3
"""Writes tests/unit/precompiled_vectors.txt for tests/unit/test_precompiled.c: a real SentencePiece
precompiled_charsmap and SentencePiece's own normalizations of a set of strings with it.

It trains a tiny SentencePiece model (spm_train, model_type char) whose normalizer is the handful of
rules in RULES below (a ligature, full-width and mathematical letters, two-code-point sources, sources
that are prefixes of others, a deletion, CR -> LF), takes the model's
normalizer_spec.precompiled_charsmap out of the model file (ModelProto field 3, NormalizerSpec field 2,
read with the few lines of protobuf decoding below: no protobuf module needed), and runs spm_normalize
on every string with the model's charsmap and nothing else: no dummy prefix, no whitespace removal,
no whitespace escaping (trained with --add_dummy_prefix=false --remove_extra_whitespaces=false;
spm_normalize without --use_internal_normalization does not escape whitespace, and is given
--remove_extra_whitespaces=false).

SentencePiece replaces the longest matching source at each position; Hugging Face's Precompiled
normalizer (what text/precompiled.c implements) works per extended grapheme cluster and takes the
shortest match. The strings are in two lists:
  AGREE:  strings on which the two rules give the same result (every cluster under 6 bytes is either
          matched whole by its shortest matching source or not matched at all, and no source spans
          clusters or several code points of a longer cluster); the test requires SentencePiece's
          output.
  DIFFER: strings on which they differ; SentencePiece's output is recorded so the test can check that
          its own expectation, worked out by hand from Hugging Face's rule, is really a different one.

Needs the Debian packages sentencepiece (spm_train, spm_normalize; 0.1.97 wrote the checked-in file):
    apt-get install -y sentencepiece
    python3 tools/gen_precompiled_vectors.py
"""
import base64
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "unit", "precompiled_vectors.txt")

# source code points -> target code points (SentencePiece's normalization_rule_tsv format)
RULES = [
    ("FB01", "66 69"),        # LATIN SMALL LIGATURE FI -> fi
    ("FB00", "66 66"),        # LATIN SMALL LIGATURE FF -> ff
    ("FB00 6C", "46 46 4C"),  # ff-ligature + l -> FFL: a source that is a prefix of another, spanning two clusters
    ("FF21", "41"),           # FULLWIDTH LATIN CAPITAL LETTER A -> A
    ("FF21 301", "C1"),       # FULLWIDTH A + COMBINING ACUTE -> Á: the prefix pair within one cluster
    ("65 301", "E9"),         # e + COMBINING ACUTE -> é: a two-code-point source
    ("301", "B4"),            # COMBINING ACUTE alone -> ACUTE ACCENT
    ("1D538", "41"),          # MATHEMATICAL DOUBLE-STRUCK CAPITAL A (4 bytes) -> A
    ("200B", ""),             # ZERO WIDTH SPACE -> nothing
    ("D", "A"),               # CR -> LF
]

AGREE = [
    "",
    "plain ascii text, nothing to do",
    "\ufb01",
    "\ufb01ne \ufb01sh",
    "\ufb00",
    "o\ufb00 stu\ufb00",            # the ff ligature before a space or end: FFL never applies
    "\uff21",
    "\uff21\uff21 \uff41",          # fullwidth A twice; fullwidth small a has no rule
    "\uff21b",
    "e\u0301",
    "cafe\u0301 au lait",
    "x\u0301",                      # x + acute: x has no rule, so the acute alone
    "\u0301",
    "\U0001D538",
    "\U0001D538\u0301",             # 6 bytes: code point by code point on both sides
    "\U0001D538BC",
    "a\u200bb",
    "\u200b",
    "\u200b\u200b\u200b",
    "a\rb",
    "\r",
    "\u00e9 precomposed stays",
    "\U0001F44D\U0001F3FD thumbs",  # an 8-byte cluster, no rule
    "\u0915\u094d\u0937",           # Devanagari conjunct, no rule
    "mixed \uff21 e\u0301 \ufb01 \U0001D538 \u200b\r end",
]

DIFFER = [
    "\uff21\u0301",          # one 5-byte cluster: HF takes the shorter match FF21 for all of it
    "x\uff21\u0301y",
    "\uff21\u0301\u0301",    # 7 bytes: HF goes code point by code point
    "e\u0301\u0302",         # 5 bytes: HF replaces the whole cluster by é
    "e\u0301\u0301",
    "\ufb01\u0301",          # fi ligature + acute, 5 bytes: HF drops the mark
    "\u0301\u0301",          # two acutes make one cluster (4 bytes): HF maps the first, drops the second
    "\ufb00l",               # two clusters: HF never sees FB00 6C
    "sta\ufb00l room",
]


def fields(buf):
    """(field number, wire type, value) of a protobuf message's top level."""
    def varint(i):
        r = shift = 0
        while True:
            c = buf[i]
            i += 1
            r |= (c & 0x7F) << shift
            shift += 7
            if c < 0x80:
                return r, i
    i, out = 0, []
    while i < len(buf):
        key, i = varint(i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wire)
        out.append((number, wire, value))
    return out


def charsmap_of(model_path):
    model = open(model_path, "rb").read()
    for number, wire, value in fields(model):
        if number == 3 and wire == 2:                 # ModelProto.normalizer_spec
            for n2, w2, v2 in fields(value):
                if n2 == 2 and w2 == 2:               # NormalizerSpec.precompiled_charsmap
                    return bytes(v2)
    raise SystemExit("no precompiled_charsmap in " + model_path)


def hexes(s):
    return " ".join("%04X" % ord(c) for c in s)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        rules = os.path.join(tmp, "rules.tsv")
        with open(rules, "w", encoding="utf-8") as f:
            for src, dst in RULES:
                f.write("%s\t%s\n" % (src, dst))
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            for i in range(50):
                f.write("the quick brown fox jumps over the lazy dog %d\n" % i)
        prefix = os.path.join(tmp, "tiny")
        subprocess.run(["spm_train", "--input=" + corpus, "--model_prefix=" + prefix, "--vocab_size=40",
                        "--model_type=char", "--normalization_rule_tsv=" + rules, "--add_dummy_prefix=false",
                        "--remove_extra_whitespaces=false", "--hard_vocab_limit=false", "--minloglevel=2"],
                       check=True, capture_output=True)
        model = prefix + ".model"
        blob = charsmap_of(model)
        version = subprocess.run(["spm_train", "--version"], capture_output=True, text=True).stdout.strip()
        decompiled = subprocess.run(["spm_normalize", "--model=" + model, "--decompile", "--minloglevel=2"],
                                    check=True, capture_output=True).stdout.decode("utf-8")

        def spm(s):
            src, dst = os.path.join(tmp, "in.txt"), os.path.join(tmp, "out.txt")
            with open(src, "w", encoding="utf-8", newline="") as f:
                f.write(s + "\n")
            subprocess.run(["spm_normalize", "--model=" + model, "--remove_extra_whitespaces=false",
                            "--minloglevel=2", "--input=" + src, "--output=" + dst], check=True, capture_output=True)
            out = open(dst, encoding="utf-8", newline="").read()
            assert out.endswith("\n"), repr(out)
            return out[:-1]

        lines = ["# Written by tools/gen_precompiled_vectors.py (%s): the precompiled_charsmap of a tiny" % version,
                 "# SentencePiece model trained with the rules below, then SentencePiece's own normalization",
                 "# (spm_normalize, the charsmap alone: no dummy prefix, no whitespace removal or escaping) of",
                 "# each input. Lines: `agree IN;OUT` (Hugging Face's rule gives the same), `differ IN;OUT`",
                 "# (it does not: test_precompiled.c has the expected result, worked out by hand). IN and OUT",
                 "# are code points in hex. Do not edit: rerun the generator.",
                 "# The rules, as spm_normalize --decompile reads them back from the charsmap:"]
        for line in decompiled.splitlines():
            src, dst = (line.split("\t#", 1)[0].split("\t") + [""])[:2]
            lines.append("#   %s -> %s" % (src, dst or "(nothing)"))
        lines.append("charsmap " + base64.b64encode(blob).decode("ascii"))
        for kind, strings in (("agree", AGREE), ("differ", DIFFER)):
            for s in strings:
                lines.append("%s %s;%s" % (kind, hexes(s), hexes(spm(s))))
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: charsmap of %d bytes, %d strings" % (OUT, len(blob), len(AGREE) + len(DIFFER)))


if __name__ == "__main__":
    main()

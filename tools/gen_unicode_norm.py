#!/usr/bin/env python3
"""Generates src/core/unicode_norm_tables.c: the data of Unicode normalization (NFC, NFD, NFKC,
NFKD: src/core/unicode_norm.c) and of lowercasing, and tests/unit/normalization_vectors.txt, a sample of the UCD's own
conformance file for tests/unit/test_unicode_norm.c.

Input: UnicodeData.txt (decompositions, canonical combining classes, lowercase mappings),
SpecialCasing.txt, DerivedNormalizationProps.txt (Full_Composition_Exclusion) and NormalizationTest.txt(.bz2) from the Unicode Character Database
(Debian package `unicode-data`: /usr/share/unicode/, version 15.0, as tools/gen_unicode_tables.py).

    python3 tools/gen_unicode_norm.py [/usr/share/unicode]
"""
import bz2
import os
import sys

from ucd import two_stage

UCD = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"
N_CODEPOINTS = 0x110000
BLOCK = 128
HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = os.path.join(HERE, "..", "src", "core", "unicode_norm_tables.c")
VECTORS = os.path.join(HERE, "..", "tests", "unit", "normalization_vectors.txt")
EVERY = {"@Part1": 16, "@Part2": 4}   # of the ~17,000 character-by-character and ~1,850 canonical
                                      # order lines, every 16th and 4th (all of parts 0 and 3)


def read_unicode_data():
    ccc, decomp = {}, {}
    with open(os.path.join(UCD, "UnicodeData.txt"), encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            cp = int(fields[0], 16)
            if int(fields[3]):
                ccc[cp] = int(fields[3])
            if fields[5]:
                parts = fields[5].split()
                compat = parts[0].startswith("<")
                decomp[cp] = (compat, [int(x, 16) for x in (parts[1:] if compat else parts)])
    return ccc, decomp


def read_lowercase():
    """cp -> its full lowercase mapping (Rust's char::to_lowercase, which Hugging Face's Lowercase
    normalizer applies): UnicodeData's simple mapping, or SpecialCasing's unconditional one."""
    lower = {}
    with open(os.path.join(UCD, "UnicodeData.txt"), encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            if fields[13]:
                lower[int(fields[0], 16)] = [int(fields[13], 16)]
    with open(os.path.join(UCD, "SpecialCasing.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            fields = [x.strip() for x in line.split(";")]
            if len(fields) < 5 or fields[4]:   # a condition list: not unconditional
                continue
            cp, low = int(fields[0], 16), [int(x, 16) for x in fields[1].split()]
            if low != [cp]:
                lower[cp] = low
    return lower


def read_exclusions():
    out = set()
    with open(os.path.join(UCD, "DerivedNormalizationProps.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(";")]
            if fields[1] != "Full_Composition_Exclusion":
                continue
            if ".." in fields[0]:
                a, b = [int(x, 16) for x in fields[0].split("..")]
            else:
                a = b = int(fields[0], 16)
            out.update(range(a, b + 1))
    return out


def full(cp, decomp, compat):
    """The full (recursive) decomposition of cp, canonical only or with compatibility mappings."""
    if cp not in decomp or (decomp[cp][0] and not compat):
        return [cp]
    out = []
    for c in decomp[cp][1]:
        out.extend(full(c, decomp, compat))
    return out


def array(out, ctype, name, values, per_line=12, fmt="%d"):
    out.append("const %s %s[%d] = {" % (ctype, name, len(values)))
    for i in range(0, len(values), per_line):
        out.append("    " + ", ".join(fmt % v for v in values[i:i + per_line]) + ",")
    out.append("};")


def tables():
    ccc, decomp = read_unicode_data()
    excluded = read_exclusions()

    # canonical combining class: two stages
    blocks, stage1 = two_stage(lambda cp: ccc.get(cp, 0), N_CODEPOINTS, BLOCK)
    assert len(blocks) < 256

    # full decompositions, canonical and compatibility, of every code point that has one
    entries = []   # (cp, canonical full, compatibility full)
    for cp in sorted(decomp):
        c, k = full(cp, decomp, False), full(cp, decomp, True)
        entries.append((cp, c if c != [cp] else None, k))
    pool, starts = [], []
    for cp, c, k in entries:
        starts.append(len(pool))
        if c:
            pool.extend(c)
        pool.extend(k)
    assert len(pool) < 65536 and max(len(k) for _, _, k in entries) <= 18

    # canonical compositions: primary composites (two-code-point canonical mappings, not excluded)
    pairs = sorted((m[1][0] << 21 | m[1][1], cp) for cp, m in decomp.items()
                   if not m[0] and len(m[1]) == 2 and cp not in excluded)

    lower = read_lowercase()
    assert all(len(v) <= 2 for v in lower.values())
    lower_cps = sorted(lower)

    out = ["/* GENERATED by tools/gen_unicode_norm.py from the Unicode Character Database (UnicodeData.txt,",
           " * DerivedNormalizationProps.txt, SpecialCasing.txt). Do not edit: rerun the generator. */",
           '#include "core/unicode_norm_tables.h"', ""]
    out.append("/* canonical combining class: unicode_ccc_blocks[unicode_ccc_stage1[cp / %d]][cp %% %d] */" % (BLOCK, BLOCK))
    array(out, "uint8_t", "unicode_ccc_stage1", stage1, 32)
    out.append("const uint8_t unicode_ccc_blocks[%d][%d] = {" % (len(blocks), BLOCK))
    for blk in blocks:
        out.append("    {" + ", ".join(str(v) for v in blk) + "},")
    out.append("};")
    out.append("")
    out.append("/* the code points with a decomposition, ascending; entry i's full decompositions in")
    out.append(" * unicode_decomp_pool from unicode_decomp_start[i]: the canonical one (unicode_decomp_canon_len[i]")
    out.append(" * code points, 0 when it has none), then the compatibility one (unicode_decomp_compat_len[i]) */")
    out.append("const int unicode_decomp_count = %d;" % len(entries))
    array(out, "uint32_t", "unicode_decomp_cp", [e[0] for e in entries], 10, "0x%05x")
    array(out, "uint16_t", "unicode_decomp_start", starts, 16)
    array(out, "uint8_t", "unicode_decomp_canon_len", [len(e[1]) if e[1] else 0 for e in entries], 32)
    array(out, "uint8_t", "unicode_decomp_compat_len", [len(e[2]) for e in entries], 32)
    array(out, "uint32_t", "unicode_decomp_pool", pool, 10, "0x%05x")
    out.append("")
    out.append("/* primary composites: key first << 21 | second, ascending, and the composite */")
    out.append("const int unicode_compose_count = %d;" % len(pairs))
    array(out, "uint64_t", "unicode_compose_key", [k for k, _ in pairs], 6, "0x%011xull")
    array(out, "uint32_t", "unicode_compose_value", [v for _, v in pairs], 10, "0x%05x")
    out.append("")
    out.append("/* full lowercase mappings: the code points that have one, ascending, and the mapping (a second")
    out.append(" * code point in unicode_lower_second, 0 when there is none) */")
    out.append("const int unicode_lower_count = %d;" % len(lower_cps))
    array(out, "uint32_t", "unicode_lower_cp", lower_cps, 10, "0x%05x")
    array(out, "uint32_t", "unicode_lower_first", [lower[c][0] for c in lower_cps], 10, "0x%05x")
    array(out, "uint32_t", "unicode_lower_second", [lower[c][1] if len(lower[c]) > 1 else 0 for c in lower_cps], 10, "0x%05x")
    with open(TABLES, "w") as f:
        f.write("\n".join(out) + "\n")


def vectors():
    path = os.path.join(UCD, "NormalizationTest.txt")
    opener = (lambda: open(path, encoding="utf-8")) if os.path.exists(path) else \
        (lambda: bz2.open(path + ".bz2", "rt", encoding="utf-8"))
    out = ["# A sample of the Unicode Character Database's NormalizationTest.txt (15.0), written by",
           "# tools/gen_unicode_norm.py: all of parts 0 and 3, every %dth line of part 1, every %dth of part 2."
           % (EVERY["@Part1"], EVERY["@Part2"]),
           "# Columns c1;c2;c3;c4;c5 as there: c2 = NFC(c1), c3 = NFD(c1), c4 = NFKC(c1), c5 = NFKD(c1)."]
    part, n = None, 0
    with opener() as f:
        for line in f:
            if line.startswith("@Part"):
                part, n = line.split()[0], 0
                continue
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            n += 1
            if n % EVERY.get(part, 1):
                continue
            out.append(";".join(line.split(";")[:5]))
    with open(VECTORS, "w") as f:
        f.write("\n".join(out) + "\n")


tables()
vectors()

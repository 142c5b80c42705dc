"""What the table generators (tools/gen_unicode_tables.py, gen_unicode_norm.py, gen_grapheme.py) share:
reading a Unicode Character Database property file, and the two-stage table layout of src/core's
tables (a stage-1 index per block of code points into the distinct blocks)."""


def read_property_file(path, wanted=None):
    """(first, last, value) for every data line of a UCD property file; only lines whose value is
    `wanted` when it is given."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cps, value = [x.strip() for x in line.split(";")[:2]]
            if wanted is not None and value != wanted:
                continue
            if ".." in cps:
                a, b = [int(x, 16) for x in cps.split("..")]
            else:
                a = b = int(cps, 16)
            out.append((a, b, value))
    return out


def two_stage(value_at, n_codepoints, block):
    """(blocks, stage1): the distinct blocks of `block` consecutive values (value_at(cp)), in order of
    first appearance, and for each block of code points the index of its values in blocks."""
    blocks, index, stage1 = [], {}, []
    for start in range(0, n_codepoints, block):
        blk = tuple(value_at(cp) for cp in range(start, start + block))
        if blk not in index:
            index[blk] = len(blocks)
            blocks.append(blk)
        stage1.append(index[blk])
    return blocks, stage1

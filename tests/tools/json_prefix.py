"""Whether a text is JSON (complete) or can still become JSON (a prefix of some JSON text): the judge
for answers a token limit cut short. A character-level recognizer written from RFC 8259's grammar,
independent of the engine's. Usage: json_prefix.py TEXT -> prints "complete", "prefix" or "invalid"."""
import json
import re
import sys

LITERALS = ("true", "false", "null")
NUMBER_PREFIX = re.compile(r"-?(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][-+]?[0-9]*)?\Z")


def number_prefix_ok(s):
    # a prefix of -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? : every part started must follow the ones before
    m = re.fullmatch(r"-?(0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]*)?", s)
    if m:
        if m.group(3) is not None and m.group(2) is not None and m.group(2) == ".":
            return False
        return True
    return s == "-"


def classify(text):
    try:
        json.loads(text)
        return "complete"
    except ValueError:
        pass
    stack = []          # containers: "{" or "["
    expect = "value"    # value, key, colon, comma_or_end, value_or_end, key_or_end
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if expect in ("value", "value_or_end"):
            if expect == "value_or_end" and c == "]":
                stack.pop(); expect = "comma_or_end" if stack else "done"; i += 1; continue
            if c == '"':
                j, ok = string_end(text, i)
                if j is None: return "prefix" if ok else "invalid"
                i = j; expect = "comma_or_end" if stack else "done"; continue
            if c in "{[":
                stack.append(c); expect = "key_or_end" if c == "{" else "value_or_end"; i += 1; continue
            if c in "-0123456789":
                j = i
                while j < n and text[j] in "-+.eE0123456789": j += 1
                if not number_prefix_ok(text[i:j]): return "invalid"
                if j == n: return "prefix"
                if not re.fullmatch(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?", text[i:j]): return "invalid"
                i = j; expect = "comma_or_end" if stack else "done"; continue
            for lit in LITERALS:
                rest = text[i:i + len(lit)]
                if lit.startswith(rest) and len(rest) < len(lit) and i + len(rest) == n: return "prefix"
                if rest == lit: break
            else:
                return "invalid"
            i += len(lit); expect = "comma_or_end" if stack else "done"; continue
        if expect in ("key", "key_or_end"):
            if expect == "key_or_end" and c == "}":
                stack.pop(); expect = "comma_or_end" if stack else "done"; i += 1; continue
            if c != '"': return "invalid"
            j, ok = string_end(text, i)
            if j is None: return "prefix" if ok else "invalid"
            i = j; expect = "colon"; continue
        if expect == "colon":
            if c != ":": return "invalid"
            i += 1; expect = "value"; continue
        if expect == "comma_or_end":
            if c == ",":
                expect = "key" if stack[-1] == "{" else "value"; i += 1; continue
            if c == ("}" if stack[-1] == "{" else "]"):
                stack.pop(); expect = "comma_or_end" if stack else "done"; i += 1; continue
            return "invalid"
        return "invalid"   # text after a complete value
    return "complete" if expect == "done" else "prefix"


def string_end(text, i):
    """(index after the closing quote, True) or (None, whether the rest is a valid unfinished string)."""
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if c == '"': return j + 1, True
        if ord(c) < 0x20: return None, False
        if c == "\\":
            if j + 1 == n: return None, True
            e = text[j + 1]
            if e in '"\\/bfnrt': j += 2; continue
            if e != "u": return None, False
            h = text[j + 2:j + 6]
            if not re.fullmatch(r"[0-9a-fA-F]*", h): return None, False
            if len(h) < 4: return (None, True) if j + 2 + len(h) == n else (None, False)
            j += 6; continue
        j += 1
    return None, True


if __name__ == "__main__":
    print(classify(sys.argv[1]))

#!/usr/bin/env python3
"""Checks the book's and the README's relative links: every linked file exists,
every #anchor names a heading of its page (mdBook's slugs) and every
{{#include}} target exists (SUMMARY.md is a page too, so each chapter it names must exist).
Exits 1 with one line per broken link (file:line: what is wrong)."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
INCLUDE = re.compile(r"\{\{#include\s+([^}\s]+)\s*\}\}")


def slug(heading):
    """mdBook's id for a heading: lower case, spaces to '-', other punctuation dropped."""
    text = re.sub(r"`", "", heading.strip().lower())
    out = []
    for ch in text:
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


def anchors(path):
    ids, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                ids.add(slug(line.lstrip("#")))
    return ids


def check(path, errors):
    fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
                continue
            for m in INCLUDE.finditer(line):
                target = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
                if not os.path.isfile(target):
                    errors.append(f"{path}:{n}: include {m.group(1)} does not exist")
            if fence:
                continue
            for m in LINK.finditer(line):
                target = m.group(1) or m.group(2)
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                file_part, _, anchor = target.partition("#")
                dest = path if not file_part else os.path.normpath(
                    os.path.join(os.path.dirname(path), file_part))
                if not os.path.exists(dest):
                    errors.append(f"{path}:{n}: link to {target}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    errors.append(f"{path}:{n}: link to {target}: no heading #{anchor} there")


def main():
    errors = []
    src = os.path.join(ROOT, "book", "src")
    pages = [os.path.join(ROOT, "README.md")]
    for d, _, files in os.walk(src):
        pages += [os.path.join(d, f) for f in sorted(files) if f.endswith(".md")]
    os.chdir(ROOT)
    for p in pages:
        check(os.path.relpath(p, ROOT), errors)
    for e in errors:
        print(e)
    if errors:
        print(f"check-book-links: {len(errors)} broken link(s)", file=sys.stderr)
        return 1
    print(f"check-book-links: {len(pages)} pages, no broken link")
    return 0


if __name__ == "__main__":
    sys.exit(main())

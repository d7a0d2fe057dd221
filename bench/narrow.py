"""A copy of templates/ and search/ whose family FAMILY has a narrower space,
for experiments that measure one region of it: the copy's
templates/lib/FAMILY.lua gets SPACE's `M.params = { ... }` block in place of
its own. Point aitune at the copy with AITUNE_HOME=HOME.

    python3 bench/narrow.py HOME FAMILY SPACE.lua"""
import os
import shutil
import sys


def main(home, family, space):
    block = open(space).read()
    if not block.startswith("M.params = {"):
        sys.exit("%s: must hold one `M.params = { ... }` block" % space)
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    for d in ("templates", "search"):
        shutil.copytree(d, os.path.join(home, d))
    path = os.path.join(home, "templates", "lib", family + ".lua")
    src = open(path).read()
    a = src.index("M.params = {")
    b = src.index("\n}\n", a) + 3
    open(path, "w").write(src[:a] + block.rstrip("\n") + "\n" + src[b:])


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python3 bench/narrow.py HOME FAMILY SPACE.lua")
    main(*sys.argv[1:])

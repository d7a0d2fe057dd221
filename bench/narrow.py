"""A copy of templates/ and search/ in which families have narrower spaces,
for experiments that measure one region of them: for each FAMILY SPACE
pair, the copy's file of that family (templates/lib/FAMILY.lua, or an op's
templates/OP/FAMILY.lua) that holds a block of the name SPACE's first line
gives gets SPACE's block in place of it. A block is `M.params = { ... }` or a local
table such as gemv's `local nt_params = { ... }`; SPACE's first line names
it. Point aitune at the copy with AITUNE_HOME=HOME.

HOME is made anew from templates/ and search/ of the current directory (run it
from the tree whose templates the experiment measures: `cd OLD && python3
NEW/bench/narrow.py HOME ...` narrows OLD's); whatever HOME held is removed
first, so a HOME that is the current directory or holds it is refused.

    python3 bench/narrow.py HOME FAMILY SPACE.lua [FAMILY SPACE.lua ...]"""
import glob
import os
import shutil
import sys


def narrow(home, family, space):
    block = open(space).read()
    head = block.split("\n", 1)[0]
    if not (head.startswith("M.params = {") or (head.startswith("local ") and head.endswith("= {"))):
        sys.exit("%s: must hold one `M.params = { ... }` or `local NAME = { ... }` block" % space)
    paths = [os.path.join(home, "templates", "lib", family + ".lua")]
    paths += sorted(glob.glob(os.path.join(home, "templates", "*", family + ".lua")))
    holding = [p for p in paths if os.path.exists(p) and head in open(p).read()]
    if not holding:
        sys.exit("%s: no templates/*/%s.lua has a `%s` block" % (space, family, head))
    path = holding[0]
    src = open(path).read()
    a = src.index(head)
    b = src.index("\n}\n", a) + 3
    open(path, "w").write(src[:a] + block.rstrip("\n") + "\n" + src[b:])


def main(home, pairs):
    here, target = os.path.realpath("."), os.path.realpath(home)
    if here == target or here.startswith(target + os.sep):
        sys.exit("bench/narrow.py: HOME %s is the current directory or holds it (it would be removed)" % home)
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    for d in ("templates", "search"):
        shutil.copytree(d, os.path.join(home, d))
    for family, space in pairs:
        narrow(home, family, space)


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 3 or len(args) % 2 == 0:
        sys.exit("usage: python3 bench/narrow.py HOME FAMILY SPACE.lua [FAMILY SPACE.lua ...]")
    main(args[0], list(zip(args[1::2], args[2::2])))

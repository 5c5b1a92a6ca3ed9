"""Writes a valid manifest of N tensors, each entry padded to about B bytes by a longer name."""
import sys

count, entry_bytes, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(path, "w") as out:
    out.write("[\n")
    for i in range(count):
        stem = f"model.layers.{i // 16}.block.{i % 16}."
        entry = '{"name": "%s", "shape": [%d, 64]}' % (stem, 1 + i % 97)
        pad = max(0, entry_bytes - len(entry) - 2 - len("weight"))
        name = stem + "p" * pad + "weight"
        out.write('{"name": "%s", "shape": [%d, 64]}%s\n' % (name, 1 + i % 97, "," if i + 1 < count else ""))
    out.write("]\n")

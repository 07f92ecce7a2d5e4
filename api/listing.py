#!/usr/bin/env python3
"""The public surface of accum's library crates, one line per item.

Reads the rustdoc JSON of each crate (`cargo +nightly rustdoc ... --output-format
json`, see generate.sh) and writes `<crate>.txt`: every path a user can name,
with the item's kind, sorted. The walk starts at the crate root and follows
public modules and re-exports (also of the other crates' JSON given here), so
a line is a path that compiles in a user's code. Under each type, its
variants, public fields, inherent methods and associated items are listed;
under each trait, its items.

An item reachable under two paths is an error (exit 1, the paths on stderr):
each item of the public API has one path.
"""

import json
import sys
from pathlib import Path

# The kinds of rustdoc's JSON `inner`, as the listing writes them.
KINDS = {
    "module": "mod",
    "struct": "struct",
    "enum": "enum",
    "union": "union",
    "trait": "trait",
    "trait_alias": "trait alias",
    "function": "fn",
    "type_alias": "type",
    "constant": "const",
    "static": "static",
    "macro": "macro",
    "proc_macro": "proc macro",
    "primitive": "primitive",
    "assoc_const": "assoc const",
    "assoc_type": "assoc type",
    "variant": "variant",
    "struct_field": "field",
}

# The kinds of rustdoc's `paths` table (items of crates without JSON here).
PATH_KINDS = {
    "module": "mod",
    "struct": "struct",
    "enum": "enum",
    "union": "union",
    "trait": "trait",
    "function": "fn",
    "type_alias": "type",
    "constant": "const",
    "static": "static",
    "macro": "macro",
    "proc_attribute": "attribute macro",
    "proc_derive": "derive macro",
    "extern_crate": "crate",
}


class Crate:
    def __init__(self, path):
        self.doc = json.loads(Path(path).read_text())
        self.index = self.doc["index"]
        self.paths = self.doc["paths"]
        self.name = self.index[str(self.doc["root"])]["name"]
        self.by_path = {
            tuple(entry["path"]): item_id
            for item_id, entry in self.paths.items()
            if entry["crate_id"] == 0
        }

    def external(self, item_id):
        """(crate name, path, kind) of an id this crate's JSON only names."""
        entry = self.paths.get(str(item_id))
        if entry is None:
            return None
        crate = self.doc["external_crates"].get(str(entry["crate_id"]), {}).get("name")
        return crate, tuple(entry["path"]), entry["kind"]


class Walk:
    def __init__(self, crates):
        self.crates = {crate.name: crate for crate in crates}
        self.lines = set()
        self.seen = {}  # (crate, item id) -> the first path it was reached by
        self.duplicates = []

    def resolve(self, crate, item_id):
        """The crate whose JSON holds the item, and its id there; or None
        and a leaf (path, kind) for items of crates without JSON."""
        if item_id is not None and str(item_id) in crate.index:
            return crate, str(item_id)
        found = crate.external(item_id)
        if found is None:
            return None, None
        name, path, kind = found
        other = self.crates.get(name)
        if other is not None and path in other.by_path:
            return other, other.by_path[path]
        return None, (path, kind)

    def emit(self, path, kind, key):
        line = f"{'::'.join(path)} {kind}"
        self.lines.add(line)
        if key is None:
            return True
        first = self.seen.get(key)
        if first is None:
            self.seen[key] = path
            return True
        if first != path:
            self.duplicates.append((first, path))
        return False

    def item(self, crate, item_id, path):
        item = crate.index[item_id]
        # Without --document-private-items rustdoc keeps public items only;
        # "default" is the visibility of variants and trait items.
        if item.get("visibility") not in ("public", "default"):
            return
        (inner_kind, inner), = item["inner"].items()
        if inner_kind == "use":
            self.reexport(crate, inner, path[:-1])
            return
        kind = KINDS.get(inner_kind, inner_kind)
        if inner_kind == "function" and len(path) > 1 and path[-2][:1].isupper():
            kind = "method"
        if not self.emit(path, kind, (crate.name, item_id)):
            return
        if inner_kind == "module":
            self.module(crate, inner, path)
        elif inner_kind in ("struct", "enum", "union"):
            self.members(crate, inner_kind, inner, path)
        elif inner_kind == "trait":
            for child in inner["items"]:
                self.child(crate, child, path)

    def child(self, crate, child_id, parent):
        child = crate.index.get(str(child_id))
        if child is None or child.get("name") is None:
            return
        self.item(crate, str(child_id), parent + [child["name"]])

    def members(self, crate, kind, inner, path):
        if kind == "struct":
            shape = inner["kind"] if isinstance(inner["kind"], dict) else {}
            fields = shape.get("plain", {}).get("fields", [])
            if "tuple" in shape:
                # Private fields of a tuple struct are `null`.
                fields = [f for f in shape["tuple"] if f is not None]
            for field in fields:
                self.child(crate, field, path)
        elif kind == "enum":
            for variant in inner["variants"]:
                self.child(crate, variant, path)
        elif kind == "union":
            for field in inner["fields"]:
                self.child(crate, field, path)
        for impl_id in inner["impls"]:
            impl = crate.index.get(str(impl_id))
            if impl is None:
                continue
            body = impl["inner"]["impl"]
            # Inherent impls only: a trait impl's items are the trait's.
            if body["trait"] is not None or body.get("is_synthetic") or body.get("blanket_impl"):
                continue
            for child in body["items"]:
                self.child(crate, child, path)

    def module(self, crate, inner, path):
        for child in inner["items"]:
            item = crate.index.get(str(child))
            if item is None:
                continue
            (kind, body), = item["inner"].items()
            if kind == "use":
                self.reexport(crate, body, path)
            elif item.get("name") is not None:
                self.item(crate, str(child), path + [item["name"]])

    def reexport(self, crate, use, path):
        target, found = self.resolve(crate, use["id"])
        if use["is_glob"]:
            if target is None:
                return
            module = target.index[found]["inner"].get("module")
            if module is not None:
                self.module(target, module, path)
            return
        name = use["name"]
        if target is not None:
            self.item(target, found, path + [name])
        elif found is not None:
            leaf_path, kind = found
            self.emit(path + [name], PATH_KINDS.get(kind, kind), ("extern",) + leaf_path)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: listing.py OUT_DIR CRATE.json...")
    out = Path(sys.argv[1])
    crates = [Crate(path) for path in sys.argv[2:]]
    failed = False
    for crate in crates:
        walk = Walk(crates)
        root = str(crate.doc["root"])
        walk.emit([crate.name], "crate", (crate.name, root))
        walk.module(crate, crate.index[root]["inner"]["module"], [crate.name])
        for first, again in walk.duplicates:
            print(
                f"{crate.name}: one item has two paths: {'::'.join(first)} and {'::'.join(again)}",
                file=sys.stderr,
            )
            failed = True
        name = crate.name.replace("_", "-")
        text = "".join(f"{line}\n" for line in sorted(walk.lines))
        (out / f"{name}.txt").write_text(text)
        print(f"{name}: {len(walk.lines)} items", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

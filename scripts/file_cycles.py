#!/usr/bin/env python3
"""Finds circles of files inside each crate: source files of one crate that use each other,
directly or through a chain (a.rs uses an item of b.rs, b.rs one of a.rs). One circle is one
strongly connected component of two or more files.

    python3 scripts/file_cycles.py [--tests] [ROOT]   # ROOT: the repository (default: this one)

A file uses another when it names an item the other file defines: `use crate::x::Y`,
`use super::…`, `self::…`, inline `crate::x::y(…)`/`super::…`/`child::…` paths, paths through an
imported module, globs (`use x::*`, matched against the identifiers the file uses). Re-exports
(`pub use`, a parent's `pub use child::Item`) are followed to the file that defines the item; a
re-export is an edge of its own only where the re-exporting file uses the name itself. `mod x;`
is not a use. `#[cfg(test)]` items and modules, `tests.rs` files and the tests/, benches/ and
examples/ targets are left out of the count; circles that only test code closes are listed
after it (`--tests` counts them too). Method calls (`value.method()`) name no path, so an
`impl T` split over several files is seen only through the paths those files use.
Macros that expand into one scope (one invokes the others by path) share their items: a bare
`helper(…)` or `TYPE` in one `macro_rules!` body that another body of the group defines is a
use of that body's file.

Prints each circle as `crate: a.rs -> b.rs -> a.rs` (a closed walk through every file of the
component), then the edges inside it with the items each uses, a count per crate and
`N circles`; exits 1 when N > 0. Python 3 standard library only; regular expressions and a
small token scanner, not a Rust parser.
"""

import re
import sys
from collections import defaultdict
from pathlib import Path

# Directories whose circles are reported with a note (still counted).
NOTES: dict[str, str] = {}

ITEM_KEYWORDS = {"fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod"}
QUALIFIERS = {"pub", "async", "unsafe", "default", "safe"}
DEF_KEYWORDS = {"fn", "const", "static", "struct", "enum", "type", "trait", "union"}
EXTERNAL = ("external",)  # a name bound to another crate's item
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|\S")
RAW_STRING = re.compile(r'r(#*)"')


# ---------------------------------------------------------------------------------------------
# Text: comments out, literals blanked, tokens


def clean(text):
    """Blanks comments and the contents of string and char literals (keeping newlines and
    offsets). Returns the cleaned text and {offset of a string's opening quote: its content}."""
    out = list(text)
    strings = {}
    n = len(text)
    i = 0

    def ident_at(k):
        return k >= 0 and (text[k].isalnum() or text[k] == "_")

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c == "r" and (not ident_at(i - 1) or text[i - 1] in "bc" and not ident_at(i - 2)):
            m = RAW_STRING.match(text, i)
            if not m:
                i += 1
                continue
            close = '"' + m.group(1)
            j = text.find(close, m.end())
            j = n if j < 0 else j
            strings[m.end() - 1] = text[m.end():j]
            blank(m.end(), j)
            i = j + len(close)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            strings[i] = text[i + 1:j]
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 3 if text.startswith("\\'", i + 1) else i + 2)
                j = n if j < 0 else j
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:
                i += 1  # a lifetime or a loop label
        else:
            i += 1
    return "".join(out), strings


class Source:
    def __init__(self, path):
        self.path = path
        raw = path.read_text(encoding="utf-8", errors="replace")
        text, self.strings = clean(raw)
        self.toks, self.pos = [], []
        for m in TOKEN.finditer(text):
            self.toks.append(m.group())
            self.pos.append(m.start())
        # Matching brackets.
        self.match = {}
        stack = []
        for k, t in enumerate(self.toks):
            if t in "({[":
                stack.append(k)
            elif t in ")}]" and stack:
                o = stack.pop()
                self.match[o] = k
                self.match[k] = o


# ---------------------------------------------------------------------------------------------
# Modules, items, imports


class Module:
    def __init__(self, key, file, parent, test, dir_for_children):
        self.key = key  # (root file, ("a", "b"))
        self.file = file
        self.parent = parent  # Module or None
        self.test = test
        self.dir = dir_for_children  # where `mod x;` inside it looks
        self.children = {}  # name -> Module
        self.items = {}  # name -> kind
        self.imports = {}  # name -> Use (module-level bindings)
        self.local_imports = {}  # name -> Use (inside fn bodies and blocks)
        self.globs = []  # [Use]


class Use:
    def __init__(self, segs, alias, glob, public, module, test, file, scope):
        self.segs = segs
        self.alias = alias
        self.glob = glob
        self.public = public
        self.module = module
        self.test = test
        self.file = file
        self.scope = scope  # (lo, hi) token range the import is visible in


class Macro:
    """A `macro_rules!` definition: its body's tokens are src.toks[lo:hi]."""

    def __init__(self, name, src, lo, hi, module, test, uses):
        self.name, self.src, self.lo, self.hi = name, src, lo, hi
        self.module, self.test, self.uses = module, test, uses


class Ref:
    """An inline path (`crate::a::b`, `child::f`) in code."""

    def __init__(self, segs, module, test, file, pos):
        self.segs, self.module, self.test, self.file, self.pos = segs, module, test, file, pos


def parse_use_tree(toks, i, end, prefix, out):
    """Parses a use tree from toks[i:end] into out: [(segments, alias or None, glob)]."""
    segs = list(prefix)
    while i < end:
        t = toks[i]
        if t == "{":
            close = find_close(toks, i, end)
            j = i + 1
            while j < close:
                k = j
                depth = 0
                while k < close and not (toks[k] == "," and depth == 0):
                    if toks[k] == "{":
                        depth += 1
                    elif toks[k] == "}":
                        depth -= 1
                    k += 1
                if k > j:
                    parse_use_tree(toks, j, k, segs, out)
                j = k + 1
            return
        if t == "*":
            out.append((segs, None, True))
            return
        if t == "::":
            if not segs:
                segs.append("::")  # a leading `::`: an external crate
            i += 1
            continue
        if t == "as":
            alias = toks[i + 1] if i + 1 < end else None
            out.append((segs, alias, False))
            return
        if t == "self" and segs:
            out.append((segs, segs[-1], False))  # `a::{self}` binds `a`
            i += 1
            continue
        if t == "$" and i + 1 < end and toks[i + 1] == "crate":
            segs.append("crate")
            i += 2
            continue
        segs.append(t)
        i += 1
    if segs and segs != list(prefix):
        out.append((segs, None, False))


def find_close(toks, i, end):
    depth = 0
    for k in range(i, end):
        if toks[k] == "{":
            depth += 1
        elif toks[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return end


def cfg_is_test(attr):
    """Whether an attribute's tokens are `cfg(test)` or `cfg(all(…, test, …))`."""
    if attr == ["cfg", "(", "test", ")"]:
        return True
    return attr[:4] == ["cfg", "(", "all", "("] and "test" in attr and "not" not in attr


class Crate:
    def __init__(self, name, dir):
        self.name = name
        self.dir = dir
        self.sources = {}  # path -> Source
        self.modules = {}  # key -> Module
        self.uses = []  # [Use]
        self.refs = []  # [Ref]
        self.idents = defaultdict(lambda: defaultdict(set))  # file -> test flag -> identifiers in code
        self.test_files = set()
        self.file_modules = defaultdict(list)  # file -> [Module]
        self.macros = []  # [Macro]
        self.spans = defaultdict(list)  # file -> [(first token, last token, keyword, name)] of its items

    def source(self, path):
        if path not in self.sources:
            self.sources[path] = Source(path)
        return self.sources[path]

    # -- module tree -------------------------------------------------------------------------

    def load_root(self, root_file, test):
        mod = Module((root_file, ()), root_file, None, test, root_file.parent)
        self.load_file(mod)

    def load_file(self, mod):
        self.modules[mod.key] = mod
        if mod.test or mod.file.name == "tests.rs":
            mod.test = True
            self.test_files.add(mod.file)
        self.file_modules[mod.file].append(mod)
        src = self.source(mod.file)
        self.walk(src, 0, len(src.toks), mod, mod.test)

    def child_file(self, parent, name, path_attr):
        if path_attr:
            p = (parent.file.parent / path_attr)
            return p if p.exists() else None
        for p in (parent.dir / f"{name}.rs", parent.dir / name / "mod.rs"):
            if p.exists():
                return p
        return None

    def walk(self, src, lo, hi, mod, test):
        """One module body: its items, uses and the paths in its code."""
        toks = src.toks
        i = lo
        attrs_test = False
        path_attr = None
        while i < hi:
            t = toks[i]
            if t == "#":
                j = i + 1
                inner = j < hi and toks[j] == "!"
                if inner:
                    j += 1
                if j < hi and toks[j] == "[":
                    close = src.match.get(j, hi)
                    body = toks[j + 1:close]
                    if cfg_is_test(body):
                        if inner:
                            test = True
                            mod.test = True
                            self.test_files.add(mod.file)
                        else:
                            attrs_test = True
                    if body[:2] == ["path", "="] and close > j + 3:
                        path_attr = src.strings.get(src.pos[j + 3])
                    i = close + 1
                    continue
            if t in (";", ","):
                i += 1
                continue
            # One item.
            start = i
            k = i
            while k < hi:
                if toks[k] == "pub":
                    k += 1
                    if k < hi and toks[k] == "(":
                        k = src.match.get(k, k) + 1
                    continue
                if toks[k] in QUALIFIERS or (toks[k] == "const" and k + 1 < hi and toks[k + 1] in ("fn", "async", "unsafe")):
                    k += 1
                    continue
                if toks[k] == "extern" and k + 2 < hi and toks[k + 1] == '"':
                    k += 3 if toks[k + 2] == '"' else 2
                    if k < hi and toks[k] in ("fn", "{"):
                        continue
                    break
                break
            kw = toks[k] if k < hi else ""
            public = toks[start] == "pub"
            end = self.item_end(src, k, hi, kw)
            item_test = test or attrs_test
            name = toks[k + 1] if k + 1 < hi else ""
            if kw == "macro_rules" and k + 2 < hi and toks[k + 1] == "!":
                name = toks[k + 2]
                mod.items.setdefault(name, "macro")
                first_use = len(self.uses)
                self.scan_code(src, k + 3, end + 1, mod, item_test)
                self.macros.append(Macro(name, src, k + 3, end + 1, mod, item_test, self.uses[first_use:]))
            elif kw == "mod" and k + 2 < hi and toks[k + 2] == ";":
                f = self.child_file(mod, name, path_attr)
                if f is not None:
                    child_dir = f.parent if f.name == "mod.rs" else f.parent / f.stem
                    if path_attr:
                        child_dir = f.parent
                    child = Module((mod.key[0], mod.key[1] + (name,)), f, mod, item_test, child_dir)
                    mod.children[name] = child
                    self.load_file(child)
            elif kw == "mod" and k + 2 < hi and toks[k + 2] == "{":
                child = Module((mod.key[0], mod.key[1] + (name,)), mod.file, mod, item_test, mod.dir / name)
                mod.children[name] = child
                self.modules[child.key] = child
                self.file_modules[mod.file].append(child)
                self.walk(src, k + 3, src.match.get(k + 2, hi), child, item_test)
            elif kw == "use":
                self.add_use(src, k + 1, end, mod, item_test, public, mod.imports, (lo, hi))
            else:
                if kw in ITEM_KEYWORDS and re.fullmatch(r"[A-Za-z_]\w*", name) and name != "_":
                    mod.items.setdefault(name, kw)
                self.scan_code(src, k, end + 1, mod, item_test)
            self.spans[mod.file].append((start, end, kw, name))
            attrs_test = False
            path_attr = None
            i = max(end + 1, start + 1)

    def item_end(self, src, k, hi, kw):
        """Index of the last token of the item whose keyword is at k: its `;`, or the `}` of its
        body (fn, struct, impl, mod, trait, `name! { … }`); a `const`/`static`/`use` goes on to `;`."""
        toks = src.toks
        j = k
        while j < hi:
            t = toks[j]
            if t == ";":
                return j
            if t in "([":
                j = src.match.get(j, hi - 1) + 1
                continue
            if t == "{":
                close = src.match.get(j, hi - 1)
                if kw in ("const", "static", "type", "use", "let"):
                    j = close + 1
                    continue
                return close
            if t == "}":  # the end of the enclosing block
                return j - 1
            j += 1
        return hi - 1

    def add_use(self, src, lo, end, mod, test, public, table, scope):
        trees = []
        parse_use_tree(src.toks, lo, end, [], trees)
        for segs, alias, glob in trees:
            if not segs:
                continue
            u = Use(segs, alias, glob, public, mod, test, mod.file, scope)
            u.pos = lo
            self.uses.append(u)
            if glob:
                mod.globs.append(u)
            else:
                bound = alias or segs[-1]
                if bound != "_":
                    table.setdefault(bound, u)

    def scan_code(self, src, lo, hi, mod, test):
        """The paths, nested `use`s and identifiers in toks[lo:hi]."""
        toks = src.toks
        idents = self.idents[mod.file][test]
        i = lo
        while i < hi:
            t = toks[i]
            if t == "use" and (i == lo or toks[i - 1] in (";", "{", "}", "]")):
                j = i + 1
                while j < hi and toks[j] != ";":
                    j = src.match.get(j, j) + 1 if toks[j] == "{" else j + 1
                self.add_use(src, i + 1, j, mod, test, False, mod.local_imports, (i, hi))
                i = j + 1
                continue
            if t == "mod" and i + 2 < hi and toks[i + 2] == "{" and re.fullmatch(r"\w+", toks[i + 1]):
                # An inline module inside a block (rare): its own scope.
                close = src.match.get(i + 2, hi)
                child = Module((mod.key[0], mod.key[1] + (toks[i + 1],)), mod.file, mod, test, mod.dir)
                self.modules.setdefault(child.key, child)
                self.walk(src, i + 3, close, child, test)
                i = close + 1
                continue
            if re.fullmatch(r"[A-Za-z_]\w*", t):
                idents.add(t)
                starts = i + 1 < hi and toks[i + 1] == "::" and (i == 0 or toks[i - 1] not in ("::", "."))
                if starts and t != "Self":
                    segs = ["crate" if t == "crate" else t]
                    j = i + 1
                    while j + 1 < hi and toks[j] == "::" and re.fullmatch(r"[A-Za-z_]\w*", toks[j + 1]):
                        segs.append(toks[j + 1])
                        idents.add(toks[j + 1])
                        j += 2
                    if i > 0 and toks[i - 1] == "$" and t == "crate":
                        segs[0] = "crate"
                    self.refs.append(Ref(segs, mod, test, mod.file, i))
                    i = j
                    continue
            i += 1

    # -- resolution --------------------------------------------------------------------------

    def lookup(self, mod, name, seen):
        """What `name` means inside mod: ("mod", Module), ("item", file, name), EXTERNAL (bound to
        another crate's item) or None (not bound here)."""
        if name in mod.items:
            return ("item", mod.file, name)
        if name in mod.children:
            return ("mod", mod.children[name])
        u = mod.imports.get(name)
        if u is not None:
            return self.resolve_use(u, seen) or EXTERNAL
        for g in mod.globs:
            if (id(g), name) in seen:
                continue
            target = self.resolve(g.module, g.segs, seen | {(id(g), name)})
            if target is None or target[0] != "mod":
                continue
            r = self.lookup(target[1], name, seen | {(id(g), name)})
            if r is not None:
                return r
        return None

    def resolve_use(self, u, seen):
        if id(u) in seen:
            return EXTERNAL
        return self.resolve(u.module, u.segs, seen | {id(u)}, own=u)

    def resolve(self, base, segs, seen=frozenset(), own=None, local=None):
        first = segs[0]
        rest = segs[1:]
        if first == "::":
            return EXTERNAL
        if first == "crate":
            cur = self.modules[(base.key[0], ())]
        elif first == "super":
            cur = base
            while segs and segs[0] == "super":
                cur = cur.parent or cur
                segs = segs[1:]
            rest = segs
        elif first == "self":
            cur = base
        else:
            target = None
            if local is not None and first in local and local[first] is not own:
                target = self.resolve_use(local[first], seen)
            elif base.imports.get(first) is own and own is not None:
                # `use x::y` where x is not a local name: an external crate.
                target = self.lookup_without(base, first, own, seen)
            else:
                target = self.lookup(base, first, seen)
            if target is None:
                return EXTERNAL  # an external crate (or a name this scan does not know)
            if target[0] != "mod":
                return target
            cur = target[1]
        for seg in rest:
            target = self.lookup(cur, seg, seen)
            if target is None:
                return ("item", cur.file, seg)  # generated by a macro, or missed: that module's file
            if target[0] != "mod":
                return target
            cur = target[1]
        return ("mod", cur)

    def lookup_without(self, mod, name, own, seen):
        if name in mod.items:
            return ("item", mod.file, name)
        if name in mod.children:
            return ("mod", mod.children[name])
        return None

    # -- edges -------------------------------------------------------------------------------

    def macro_edges(self):
        """Names a macro body uses without a path, from items another macro of its expansion
        group defines or imports. Macros that invoke each other (`$crate::a::m!()`, `m!()`) expand
        into one scope, so a helper `fn f` in one body is called as `f(…)` from another's; such
        bare names resolve where the macros expand, which no `use` shows. Free functions count
        (called `f(…)`), as do types and constants (capitalised); methods (a `self` parameter,
        or inside an `impl` in the body) do not. Returns [(from file, to file, name, test)]."""
        by_name = defaultdict(list)
        for m in self.macros:
            by_name[m.name].append(m)
        parent = {id(m): id(m) for m in self.macros}

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        defs = {}  # id(macro) -> {name: kind}
        for m in self.macros:
            toks = m.src.toks
            impl_ends = []
            names = {}
            for i in range(m.lo, m.hi):
                t = toks[i]
                while impl_ends and i > impl_ends[-1]:
                    impl_ends.pop()
                if t == "impl":
                    j = i
                    while j < m.hi and toks[j] != "{":
                        j += 1
                    impl_ends.append(m.src.match.get(j, m.hi))
                    continue
                if i + 1 < m.hi and toks[i + 1] == "!" and t in by_name and toks[i - 1] != "$":
                    for other in by_name[t]:
                        parent[find(id(other))] = find(id(m))
                if t in DEF_KEYWORDS and i + 1 < m.hi and toks[i - 1] != "$" and re.fullmatch(r"[A-Za-z_]\w*", toks[i + 1]):
                    name = toks[i + 1]
                    if impl_ends or name == "_":
                        continue
                    if t == "fn" and self.takes_self(toks, i + 2, m.hi):
                        continue
                    names[name] = t
            defs[id(m)] = names
        # Per group: name -> [(file, target or None)]
        groups = defaultdict(lambda: defaultdict(list))
        for m in self.macros:
            g = groups[find(id(m))]
            for name in defs[id(m)]:
                g[name].append((m.module.file, None))
            for u in m.uses:
                if not u.glob and (u.alias or u.segs[-1]) != "_":
                    g[u.alias or u.segs[-1]].append((m.module.file, u))
        out = []
        for m in self.macros:
            g = groups[find(id(m))]
            toks = m.src.toks
            own = defs[id(m)]
            own_imports = {u.alias or u.segs[-1] for u in m.uses}
            for i in range(m.lo, m.hi):
                t = toks[i]
                if t not in g or t in own or t in own_imports:
                    continue
                if toks[i - 1] in (".", "::", "$", "'") or toks[i - 1] in DEF_KEYWORDS | {"let", "mut"}:
                    continue
                if not t[0].isupper() and not (i + 1 < m.hi and toks[i + 1] == "("):
                    continue
                for file, u in g[t]:
                    if u is None:
                        out.append((m.module.file, file, t, m.test))
                        continue
                    target = self.resolve(u.module, u.segs, frozenset({id(u)}), own=u)
                    if target is not None and target[0] == "item":
                        out.append((m.module.file, target[1], target[2], m.test))
        return out

    @staticmethod
    def takes_self(toks, j, hi):
        """Whether the fn whose generics or parameters start at toks[j] takes `self`."""
        depth = 0
        while j < hi:
            if toks[j] == "<":
                depth += 1
            elif toks[j] == ">":
                depth -= 1
            elif toks[j] == "(" and depth <= 0:
                k = j + 1
                while k < hi and (toks[k] in ("&", "mut", "'") or toks[k - 1] == "'"):
                    k += 1  # `&`, `&mut`, `&'a mut` before `self`
                return k < hi and toks[k] == "self"
            j += 1
        return False

    def edges(self, with_tests):
        """{(from file, to file): {item names}} and the same for test-only edges."""
        edges = defaultdict(set)
        for u in self.uses:
            test = u.test or u.file in self.test_files
            if test and not with_tests:
                continue
            if u.glob:
                if u.public:
                    continue  # a glob re-export: transparent
                target = self.resolve(u.module, u.segs, own=u)
                if target is None or target == EXTERNAL:
                    continue
                if target[0] == "item":
                    self.add(edges, u.file, target[1], target[2] + "::*")
                    continue
                names = self.idents[u.file][False] | (self.idents[u.file][True] if with_tests else set())
                for name in sorted(names):
                    r = self.lookup(target[1], name, frozenset({id(u)}))
                    if r is not None and r[0] == "item":
                        self.add(edges, u.file, r[1], r[2])
                continue
            target = self.resolve(u.module, u.segs, frozenset({id(u)}), own=u)
            if target is None or target[0] != "item":
                continue
            if u.public:
                bound = u.alias or u.segs[-1]
                used = bound in self.idents[u.file][False] or (with_tests and bound in self.idents[u.file][True])
                if not used:
                    continue  # a re-export only: followed by whoever names it
            self.add(edges, u.file, target[1], target[2])
        for a, b, name, test in self.macro_edges():
            if with_tests or not (test or a in self.test_files):
                self.add(edges, a, b, name)
        for r in self.refs:
            test = r.test or r.file in self.test_files
            if test and not with_tests:
                continue
            target = self.resolve(r.module, r.segs, local=r.module.local_imports)
            if target is None or target[0] != "item":
                continue
            self.add(edges, r.file, target[1], target[2])
        return edges

    @staticmethod
    def add(edges, a, b, name):
        if a != b:
            edges[(a, b)].add(name)


# ---------------------------------------------------------------------------------------------
# Crates


def package_name(cargo_toml):
    section = None
    for line in cargo_toml.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        if s.startswith("["):
            section = s
        elif section == "[package]":
            m = re.match(r'name\s*=\s*"([^"]+)"', s)
            if m:
                return m.group(1)
    return cargo_toml.parent.name


def target_roots(crate_dir):
    """(root file, test-only) of each target of the package in crate_dir."""
    roots = []
    cargo = crate_dir / "Cargo.toml"
    text = cargo.read_text(encoding="utf-8") if cargo.exists() else ""
    for m in re.finditer(r"^\[(lib|\[bin\])\][^\[]*?^path\s*=\s*\"([^\"]+)\"", text, re.M | re.S):
        roots.append((crate_dir / m.group(2), False))
    for rel in ("src/lib.rs", "src/main.rs"):
        roots.append((crate_dir / rel, False))
    bins = crate_dir / "src" / "bin"
    if bins.is_dir():
        for p in sorted(bins.iterdir()):
            if p.suffix == ".rs":
                roots.append((p, False))
            elif (p / "main.rs").exists():
                roots.append((p / "main.rs", False))
    for sub in ("tests", "benches", "examples"):
        d = crate_dir / sub
        if d.is_dir():
            for p in sorted(d.iterdir()):
                if p.suffix == ".rs":
                    roots.append((p, True))
                elif (p / "main.rs").exists():
                    roots.append((p / "main.rs", True))
    seen, out = set(), []
    for p, test in roots:
        p = p.resolve()
        if p.exists() and p not in seen:
            seen.add(p)
            out.append((p, test))
    return out


def load_crates(root):
    dirs = sorted(p for p in (root / "crates").iterdir() if (p / "Cargo.toml").exists())
    dirs += [p for p in (root / "bindings" / "python",) if (p / "Cargo.toml").exists()]
    crates = []
    for d in dirs:
        crate = Crate(package_name(d / "Cargo.toml"), d.resolve())
        for file, test in target_roots(d):
            crate.load_root(file, test)
        crates.append(crate)
    return crates


# ---------------------------------------------------------------------------------------------
# Components


def sccs(nodes, edges):
    """Tarjan's strongly connected components (iterative)."""
    graph = defaultdict(list)
    for a, b in edges:
        graph[a].append(b)
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def closed_walk(comp, edges):
    """A closed walk from the first file through every file of the component."""
    members = set(comp)
    graph = defaultdict(list)
    for a, b in edges:
        if a in members and b in members:
            graph[a].append(b)

    def path(a, goal):
        prev, queue = {a: None}, [a]
        for v in queue:
            if goal(v) and v != a:
                out = [v]
                while prev[out[-1]] is not None:
                    out.append(prev[out[-1]])
                return out[::-1]
            for w in sorted(graph[v]):
                if w not in prev:
                    prev[w] = v
                    queue.append(w)
        return [a]

    walk = [comp[0]]
    left = set(comp[1:])
    while left:
        walk += path(walk[-1], lambda v: v in left)[1:]
        left -= set(walk)
    walk += path(walk[-1], lambda v: v == comp[0])[1:]
    return walk


def label(crate, file):
    rel = file.relative_to(crate.dir).as_posix()
    return rel[4:] if rel.startswith("src/") else rel


def note_for(root, comp):
    notes = set()
    for f in comp:
        rel = f.relative_to(root).as_posix()
        for prefix, note in NOTES.items():
            if rel.startswith(prefix):
                notes.add(note)
    return sorted(notes)


def report(root, crate, comp, edges, out, test_only=None):
    """The circle's closed walk, then each edge inside it with the items it uses (those only
    test code uses marked `test:`)."""
    walk = closed_walk(comp, edges)
    notes = note_for(root, comp)
    suffix = f"   [{'; '.join(notes)}]" if notes else ""
    out.append(f"{crate.name}: {' -> '.join(label(crate, f) for f in walk)}{suffix}")
    members = set(comp)
    for (a, b), names in sorted(edges.items(), key=lambda e: (label(crate, e[0][0]), label(crate, e[0][1]))):
        if a in members and b in members:
            tests = (test_only or {}).get((a, b), set())
            shown = ", ".join(sorted(names - tests))
            if tests:
                shown += ("; " if shown else "") + "test: " + ", ".join(sorted(tests))
            out.append(f"    {label(crate, a)} -> {label(crate, b)}: {shown}")


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    with_tests = "--tests" in argv
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    root = Path(args[0]).resolve() if args else Path(__file__).resolve().parent.parent
    crates = load_crates(root)
    total = 0
    per_crate = []
    test_lines = []
    lines = []
    for crate in crates:
        edges = crate.edges(with_tests)
        nodes = {f for m in crate.modules.values() for f in [m.file]}
        comps = [c for c in sccs(nodes, edges) if len(c) >= 2]
        comps.sort(key=lambda c: [label(crate, f) for f in c])
        for comp in comps:
            report(root, crate, comp, edges, lines)
        total += len(comps)
        per_crate.append(f"{crate.name}: {len(comps)} circle{'s' if len(comps) != 1 else ''}"
                         + (f" ({sum(len(c) for c in comps)} files)" if comps else ""))
        if not with_tests:
            # Circles only test code closes (or widens): listed, not counted.
            all_edges = crate.edges(True)
            test_only = {e: n - edges.get(e, set()) for e, n in all_edges.items() if n - edges.get(e, set())}
            known = {frozenset(c) for c in comps}
            for comp in sccs(nodes, all_edges):
                if len(comp) >= 2 and frozenset(comp) not in known:
                    report(root, crate, comp, all_edges, test_lines, test_only)
    print("\n".join(lines))
    if test_lines:
        print("\ncircles closed or widened by test code only (not counted; --tests counts them):")
        print("\n".join(test_lines))
    print("\nper crate (circles inside that crate):")
    for line in per_crate:
        print(f"    {line}")
    print(f"{total} circle{'s' if total != 1 else ''}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

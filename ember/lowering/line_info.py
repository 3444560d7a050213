"""Line information in the PTX (`ember compile -lineinfo`, or `-g`): `.file` and `.loc`
directives that give each instruction its Ember source line, which Nsight Compute,
compute-sanitizer and cuda-gdb show.

The lowering attaches LLVM debug locations (`!dbg`) to the instructions of each op, and
the module has a compile unit whose emission kind is DebugDirectivesOnly: NVPTX then
writes the directives and nothing else - no DWARF sections, and the PTX's `.target` stays
`sm_90` (full debug info would make it `sm_90, debug`, which changes what ptxas does).
File names are as the compile names them (relative as given, `std/...`), never absolute,
so the PTX stays the same in any directory. An op inlined from a function of another file
keeps that file's line (a lexical block of its own file inside the kernel's subprogram).
"""

from __future__ import annotations


def _quoted(text: str) -> str:
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\{ord(c):02X}" for c in text) + '"'


class LineInfo:
    """The debug metadata of one LLVM module (ember.lowering.llvm_ir.Module)."""

    def __init__(self, module):
        self.m = module
        self._files: dict = {}
        self._cu = None
        self._locations: dict = {}
        self._blocks: dict = {}
        self._type = None

    def _file(self, name: str) -> str:
        ref = self._files.get(name)
        if ref is None:
            ref = self._files[name] = self.m.add_raw_metadata(f'!DIFile(filename: {_quoted(name)}, directory: "")')
        return ref

    def _unit(self, name: str) -> str:
        if self._cu is None:
            self._cu = self.m.add_raw_metadata(
                f"!DICompileUnit(language: DW_LANG_C99, file: {self._file(name)}, producer: \"ember\", "
                "isOptimized: true, runtimeVersion: 0, emissionKind: DebugDirectivesOnly)", distinct=True)
            self.m.add_named_metadata("llvm.dbg.cu", self._cu)
            self.m.add_named_metadata("llvm.module.flags",
                                      self.m.add_raw_metadata('!{i32 2, !"Debug Info Version", i32 3}'))
            self.m.add_named_metadata("llvm.module.flags",
                                      self.m.add_raw_metadata('!{i32 2, !"Dwarf Version", i32 2}'))
            self._type = self.m.add_raw_metadata("!DISubroutineType(types: !{})")
        return self._cu

    def subprogram(self, llf, name: str, span) -> tuple:
        """A subprogram for the LLVM function `llf` (the Ember function `name` at `span`),
        attached to it; returns (its ref, its file name) for `location`."""
        file = span.file.name if span is not None else "<unknown>"
        line = span.line_col[0] if span is not None else 0
        unit = self._unit(file)
        sp = self.m.add_raw_metadata(
            f"!DISubprogram(name: {_quoted(name)}, scope: {self._file(file)}, file: {self._file(file)}, "
            f"line: {line}, type: {self._type}, scopeLine: {line}, "
            f"spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: {unit})", distinct=True)
        llf.subprogram = sp
        return sp, file

    def location(self, span, subprogram: tuple) -> str:
        """The `!DILocation` of a source span inside a subprogram (cached)."""
        sp, sp_file = subprogram
        file = span.file.name
        line, col = span.line_col
        key = (sp, file, line, col)
        ref = self._locations.get(key)
        if ref is None:
            scope = sp
            if file != sp_file:
                scope = self._blocks.get((sp, file))
                if scope is None:
                    scope = self._blocks[(sp, file)] = self.m.add_raw_metadata(
                        f"!DILexicalBlockFile(scope: {sp}, file: {self._file(file)}, discriminator: 0)")
            ref = self._locations[key] = self.m.add_raw_metadata(
                f"!DILocation(line: {line}, column: {col}, scope: {scope})")
        return ref

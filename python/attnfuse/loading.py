"""`attnfuse.load`: a saved package back as the object that saved it."""

from __future__ import annotations

from .compiler import CompiledModule
from .generation import Generator
from .package import read_package


def load(path, verify_weights: bool = True):
    """The CompiledModule or Generator saved at `path` (`save`), ready to
    call, in any process: no torch.export, no model class, no
    transformers. The package is checked before any of its code is loaded
    (attnfuse.package: manifest schema and checksum, format and attnfuse
    version, each file's size and SHA-256, this host's machine and CPU
    features), then the library's own record of its target and entry
    points against the manifest; any mismatch is an attnfuse.PackageError
    naming the file. The weights are mapped from weights.bin (copy on
    write: the package's files are only read), not copied.
    `verify_weights=False` skips the SHA-256 of weights.bin (its size is
    still checked), which reads the whole file."""
    package = read_package(path, verify_weights)
    if package.kind == "generator":
        return Generator.from_package(package)
    return CompiledModule.from_package(package)

"""What `ember compile` makes beyond PTX text, for build pipelines: cubins (nvJitLink) and
multi-architecture fatbins (nvFatbin), C/C++ headers embedding them, manifests, builds of
many const-value variants in parallel, dependency files and the CMake module. Every step
from PTX on is cached like the compile itself (ember.cache). Imports no LLVM: a build
whose every step hits the cache never loads it. (Named for what it holds: a package called
`build/` is what tools and ignore patterns take for a build's output folder.)"""

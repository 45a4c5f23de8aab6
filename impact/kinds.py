"""The vocabularies every stage shares: surface kinds, languages, fact kinds, the trees a
report compares and how the change was named, descriptor types and launch kinds.

Maintainers: a kind is compared in many modules, so it is spelled once, here.
Code compares against these members, never against a string literal; the
surface maps (data) name the same values, and their schema lists them. This
module imports nothing from impact.
"""

from __future__ import annotations

import enum


class SurfaceKind(enum.StrEnum):
    """What a path is, as a surface map classifies it."""

    OUTSIDE = "outside"
    # hipDNN / rocKE
    DVC_POINTER = "dvc-pointer"
    BUILD = "build"
    DEPS = "deps"
    AOT_CATALOG = "aot-catalog"
    AOT_CATALOG_PRODUCER = "aot-catalog-producer"
    AOT_CATALOG_SOURCE = "aot-catalog-source"
    ROCKE_ENGINE = "rocke-engine"
    ROCKE_RUNTIME = "rocke-runtime"
    ROCKE_PLATFORM = "rocke-platform"
    ROCKE_LIBRARY = "rocke-library"
    HKP_PACK = "hkp-pack"
    DESCRIPTOR = "descriptor"
    DESCRIPTOR_ELSEWHERE = "descriptor-elsewhere"
    DESCRIPTOR_KERNEL_SOURCE = "descriptor-kernel-source"
    LAUNCH_SURFACE_PROFILE = "launch-surface-profile"
    TEST_PIN = "test-pin"
    INGESTOR_PACK = "ingestor-pack"
    INGESTOR_ENGINE = "ingestor-engine"
    INGESTOR_SDK_HEADER = "ingestor-sdk-header"
    SDK_HEADER = "sdk-header"
    GENERIC_TARGET = "generic-target"
    GENERATED_HEADER = "generated-header"
    FLATBUFFERS_SCHEMA = "flatbuffers-schema"
    FLATC_FLAGS = "flatc-flags"
    # the bindings family (aiter, flash-attention)
    OP_PYTHON = "op-python"
    OP_CPP = "op-cpp"
    OP_SOURCES_MAP = "op-sources-map"
    BUILD_SCRIPT = "build-script"  # a Python build script (setup.py) declaring extensions


class Language(enum.StrEnum):
    """Which extractor family reads a file."""

    PYTHON = "python"
    CPP = "cpp"
    JSON = "json"
    YAML = "yaml"
    CMAKE = "cmake"
    FLATBUFFERS = "flatbuffers"
    TEXT = "text"


class FactKind(enum.StrEnum):
    """What an extractor saw; the `kind` of a Fact."""

    # every file
    PARSE_FAILURE = "parse-failure"
    CONTENT = "content"
    # Python (impact/python)
    FUNCTION = "function"
    CLASS = "class"
    ASSIGNMENT = "assignment"
    IMPORT = "import"
    RE_EXPORT = "re-export"
    READS = "reads"
    PARAM = "param"
    # A `b.param` call the reader cannot place: a name that is not a literal string, or
    # a call inside a comprehension (declared once per element, in an order of its own).
    PARAM_UNREAD = "param-unread"
    SIGNATURE_BUILDER = "signature-builder"
    KERNEL_MODULE = "kernel-module"
    KEYWORD_LITERAL = "keyword-literal"
    # C++ (impact/cpp)
    KERNEL_ARGUMENT_LIST = "kernel-argument-list"
    LAUNCH_CALL = "launch-call"
    CONSTEXPR_STRING = "constexpr-string"
    METADATA_READ = "metadata-read"
    GEOMETRY_CALL = "geometry-call"
    INCLUDE = "include"
    PACK_ROW = "pack-row"
    FUNCTION_DEFINITION = "function-definition"
    CONSTANT_DEFINITION = "constant-definition"
    # A name a file declares without defining it there: a function's prototype (a
    # header's), a type alias (`using`, `typedef`), a class, a namespace-scope variable.
    SYMBOL_DECLARATION = "symbol-declaration"
    STRING_LITERAL = "string-literal"
    # CMake
    TARGET_SOURCES = "target-sources"
    COMPILE_DEFINITION = "compile-definition"
    CMAKE_CALL = "cmake-call"
    # descriptors and profiles (impact/descriptors)
    DESCRIPTOR = "descriptor"
    KDP = "kdp"
    VARIANT = "variant"
    SYMBOL = "symbol"
    KMD_FIELD = "kmd-field"
    HEURISTIC = "heuristic"
    ENGINE = "engine"
    PROFILE = "profile"
    LAUNCH_SURFACE = "launch-surface"
    AOT_KERNEL = "aot-kernel"
    # .dvc pointers
    DVC_OUT = "dvc-out"
    # the bindings family (impact/bindings)
    OP_MODULE = "op-module"
    OP_STUB = "op-stub"
    OP_WRAPPER = "op-wrapper"  # a module-level Python function that calls into an extension
    OP_CALL = "op-call"
    # a call of a forwarder (`cute.compile(obj, *args)`), bound to `obj.__call__`
    OP_FORWARDED_CALL = "op-forwarded-call"
    OP_CALLEE = "op-callee"  # a class's own `__call__`: what a forwarded call binds to
    FAKE_TWIN = "fake-twin"
    PYBIND_DEF = "pybind-def"
    SCHEMA_DEF = "schema-def"
    TORCH_IMPL = "torch-impl"
    BOXED_READ = "boxed-read"
    CPP_FUNCTION = "cpp-function"
    BINDING_UNREADABLE = "binding-unreadable"
    PYBIND_MODULE = "pybind-module"  # a PYBIND11_MODULE body: the binding macros it expands
    # builds (impact/builds): an extension module a build file declares
    EXTENSION_MODULE = "extension-module"
    # a build script's statement: lines, key, callees, names, path literals
    BUILD_STEP = "build-step"


class BuildFile(enum.StrEnum):
    """Which reader of impact/builds declared an extension module: the `build` of an
    `extension-module` fact and of the graph's `ExtensionModule`."""

    SETUP_PY = "setup.py"
    CMAKE = "cmake"
    JIT_CONFIG = "jit-config"  # a module -> sources map such as aiter's optCompilerConfig.json


class BuildGap(enum.StrEnum):
    """Which part of an extension module's declaration a build reader could not resolve."""

    NAME = "name"
    SOURCES = "sources"
    FLAGS = "flags"
    ARCHS = "archs"


class ViewName(enum.StrEnum):
    """The role a tree plays in a report: a view's name (`head`, `merged`), a snapshot's
    label and a side's revision (`base` too), a key of `Views.revisions` and of an emit
    file's revisions (`target_tip`, the tip a merged view merges onto)."""

    BASE = "base"
    HEAD = "head"
    MERGED = "merged"
    TARGET_TIP = "target_tip"


class InputForm(enum.StrEnum):
    """How the user named the change (`impact.git.open_views`; the report's input form)."""

    BASE_HEAD = "base-head"
    RANGE = "range"
    COMMIT = "commit"
    WORKTREE = "worktree"


class DescriptorType(enum.StrEnum):
    """A hipDNN kernel-ingestor descriptor's type, as its file name gives it
    (`<name>.<type>.json`, `impact.descriptors.descriptor_type`)."""

    KDP = "kdp"  # a kernel pack: the variants it ships
    UKD = "ukd"  # a kernel: its archs, launches and metadata
    UED = "ued"  # an engine (its graph-match symbol)
    UMD = "umd"  # a match symbol
    UDD = "udd"  # a dispatch symbol
    UHD = "uhd"  # a heuristic (a native one's payload symbol)
    KMD = "kmd"  # the kernel metadata fields


class LaunchKind(enum.StrEnum):
    """A variant launch's `kind` (its kernel source), as a UKD names it."""

    ROCKE = "rocke"                      # a rocKE Python source and its builder
    HIP = "hip"                          # a HIP C++ source and entry, with its build
    HSACO = "hsaco"                      # a built code object file and its symbol
    EMBEDDED_SOURCE = "embedded_source"  # a source file and entry point
    KPACK = "kpack"                      # the packed form: a library, a TOC key, a signature


class ValueKind(enum.StrEnum):
    """The kind of a value a Python call passes: a literal's type, or any other
    expression (whose type no static reading knows)."""

    NONE = "none"
    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    STR = "str"
    EXPR = "expr"

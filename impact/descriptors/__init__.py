"""Facts about hipDNN kernel-ingestor descriptors (`*.{kdp,ukd,ued,umd,udd,uhd,kmd}.json`)
and IngestorGenerator tool profiles (`*.profile.yaml`)."""

from impact.descriptors.arch import arch_problems, expand_arch, generic_targets
from impact.descriptors.facts import (
    DESCRIPTOR_TYPES,
    descriptor_type,
    extract_descriptor_facts,
    normalize_rocke_source,
)
from impact.descriptors.profiles import extract_profile_facts, parse_locator

__all__ = [
    "DESCRIPTOR_TYPES",
    "arch_problems",
    "descriptor_type",
    "expand_arch",
    "extract_descriptor_facts",
    "extract_profile_facts",
    "generic_targets",
    "normalize_rocke_source",
    "parse_locator",
]

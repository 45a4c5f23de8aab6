"""The fault suite of issue 13: one table-driven test per case the adversarial run found.

Each case names the tests that reproduce it (they live beside the code they test and are
not copied here) and the OS protection it depends on. A case runs its tests in a fresh
pytest process, so this file alone replays the whole issue: `pytest tests/test_fault_suite.py`
(all cases) or `-m "not slow"` (the quick ones, under a minute on two cores). A case whose
protection this system lacks is skipped, and the skip reason names the protection.

Slow cases (marked `slow`: each builds several full reports or runs the emitter): the
sandbox, emitter signals and limits, map-from-base, the NUL byte and duplicate key reports,
and the git and work-tree faults.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import outcome

from impact.errors import EXIT_BAD_INPUT

TESTS = Path(__file__).resolve().parent


def _userns() -> bool:
    """Whether this process may create an unprivileged user namespace (the emitter jail)."""
    tool = shutil.which("unshare")
    if tool is None:
        return False
    try:
        return subprocess.run([tool, "--user", "--map-root-user", "true"],
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _proc() -> bool:
    return os.path.exists("/proc/self/status")


def _flock() -> bool:
    return hasattr(fcntl, "flock")


PROTECTIONS = {
    "user namespaces": _userns,
    "/proc": _proc,
    "flock": _flock,
    "root (mknod)": lambda: os.geteuid() == 0,
}
"""What a case may depend on, and how this system is probed for it."""


@dataclass(frozen=True)
class Case:
    what: str
    tests: tuple[str, ...]
    needs: tuple[str, ...] = ()
    slow: bool = False


R = "test_fail_closed_readers.py::"
M = "test_map_not_chosen_by_the_change.py::"
S = "test_sandbox.py::"
G = "test_git_faults.py::"
C = "test_clean_output.py::"
PD = "test_python_decoding.py::"
LE = "test_cpp_line_ends.py::"
DR = "test_docstring_readers.py::"
W = "test_output_sinks.py::"
P = "test_parent_reads.py::"
V = "test_validate_correctness.py::"
L = "test_child_limits.py::"
N = "test_merged_renames.py::"
VT = "test_validate_trust.py::"
VC = "test_validate_confine.py::"

CASES: dict[str, Case] = {
    # Read as safe when it is not
    "map-from-the-head": Case("a head's own surface map never judges that head",
                              (M + "test_a_map_the_head_adds_does_not_judge_that_head",
                               M + "test_a_map_the_head_edits_is_the_base_s_map_that_judges",
                               M + "test_the_map_edit_is_a_row_naming_the_patterns",
                               M + "test_a_map_edit_alone_is_not_n_a"), slow=True),
    "nul-byte-builder": Case("a NUL byte in a builder comment is not NONE",
                             (R + "test_python_that_does_not_compile_is_a_parse_failure",
                              R + "test_nul_byte_in_a_builder_comment_is_never_none"), slow=True),
    "duplicate-kdp-key": Case("a duplicate key in a KDP is changed, naming the key",
                              (R + "test_duplicate_key_in_a_kdp_names_the_key",
                               R + "test_duplicate_key_in_every_json_reader",
                               R + "test_duplicate_kdp_key_is_never_none"), slow=True),
    "map-matching-nothing": Case("a --surface-map that matches nothing is exit 3",
                                 (M + "test_a_given_map_that_matches_nothing_is_an_error",)),
    "forged-emit-result": Case("emit results of an untrusted head never fold a row; the emit "
                               "file's sha256 is recorded",
                               ("test_emit.py::test_untrusted_head_never_folds_and_the_emit_"
                                "file_is_hashed",), slow=True),
    "patched-analyser": Case("head code cannot patch the installed analyser",
                             (S + "test_cannot_patch_the_installed_analyser",),
                             needs=("user namespaces",), slow=True),
    "missing-pack-blob": Case("a missing blob of an unchanged pack is named, never NONE",
                              (R + "test_unreadable_unchanged_pack_is_named_and_never_none",
                               R + "test_missing_pack_object_in_a_real_repository_is_named")),
    # Issue 25: the reader sees other text than the compiler
    "python-coding-declaration": Case(
        "a coding declaration (raw_unicode_escape, unicode_escape, utf-7) that makes a "
        "comment code is refused, never read as UTF-8",
        (PD + "test_a_codec_that_can_make_a_comment_code_is_refused",
         PD + "test_a_builder_param_hidden_by_a_coding_declaration_is_never_none",
         PD + "test_a_caller_swap_hidden_by_a_coding_declaration_is_never_none",
         PD + "test_a_byte_search_does_not_pass_over_a_file_it_cannot_search",
         PD + "test_a_latin_1_file_is_read_by_its_declaration")),
    "cpp-lone-cr": Case("a lone CR ends a C++ // comment as g++ and clang end it",
                        (LE + "test_a_kernel_argument_after_a_lone_cr_is_read",
                         LE + "test_an_early_return_after_a_lone_cr_is_never_inert",
                         LE + "test_line_numbers_stay_the_compiler_s",
                         LE + "test_a_lone_cr_in_a_comment_changes_a_binding_file_s_content")),
    "cpp-line-splice": Case("a backslash, blanks, then a line end splices a // comment; the "
                            "comment-blind digest reads after splicing",
                            (LE + "test_a_backslash_then_blanks_splices_the_next_entry_into_"
                             "the_comment",
                             LE + "test_the_comment_blind_digest_reads_after_line_splicing",
                             LE + "test_the_comment_blind_digest_does_not_read_raw_strings",
                             LE + "test_a_splice_that_joins_two_tokens_is_not_read",
                             LE + "test_a_joining_splice_edit_is_never_none")),
    "docstring-reader": Case("a docstring (or comment) edit in a module that reads its "
                             "docstrings (or source) is changed, never inert",
                             (DR + "test_a_docstring_edit_in_a_module_that_reads_docstrings_"
                              "is_never_none",
                              DR + "test_a_comment_edit_in_a_module_that_reads_its_source_is_"
                              "never_none",
                              DR + "test_every_python_digest_keeps_docstrings_a_module_reads",
                              DR + "test_the_same_docstring_edit_elsewhere_still_reads_none")),
    # Issue 25: callers that change what they pass
    "caller-changes-what-it-passes": Case(
        "a caller swapping tensors, keyword values or flags, or changing its body, is never "
        "NONE (a stub with another fc_name included)",
        ("test_caller_changes.py::test_a_caller_that_changes_what_it_passes_is_never_none",
         "test_caller_changes.py::test_a_call_rewritten_to_bind_the_same_stays_none")),
    # The emitter sandbox
    "sandbox-git-hooks": Case("cannot write the repository's .git/hooks",
                              (S + "test_cannot_write_the_repositorys_git_hooks",),
                              needs=("user namespaces",), slow=True),
    "sandbox-home": Case("cannot write $HOME", (S + "test_cannot_write_the_users_home",),
                         needs=("user namespaces",), slow=True),
    "sandbox-credentials": Case("credentials never reach the emit file or the report",
                                (S + "test_credentials_never_reach_the_emit_file_or_the_"
                                 "report",), needs=("user namespaces",), slow=True),
    "sandbox-unix-socket": Case("cannot connect to a filesystem UNIX socket",
                                (S + "test_cannot_connect_to_a_filesystem_unix_socket",),
                                needs=("user namespaces",), slow=True),
    "sandbox-daemon": Case("no setsid/setpgid descendant survives the run",
                           (S + "test_no_descendant_survives_the_run",),
                           needs=("user namespaces", "/proc"), slow=True),
    "sandbox-record": Case("missing protections are recorded in the emit file",
                           (S + "test_missing_protections_are_recorded_when_namespaces_are_off",
                            S + "test_protections_are_recorded_per_revision"), slow=True),
    "sandbox-signals": Case("SIGTERM, SIGINT and the parent's death end the child tree and "
                            "remove the temp folder",
                            (S + "test_signals_and_the_parents_death_end_the_child_tree",),
                            needs=("/proc",), slow=True),
    # Crashes and hangs
    "unreadable-objects": Case("unreadable .git/objects: a row naming the file, or exit 3 "
                               "(real chmod as non-root; injected PermissionError as root)",
                               (G + "test_permission_denied_on_an_object_names_the_file",
                                G + "test_permission_denied_on_the_objects_folder_is_one_"
                                "clean_error"), slow=True),
    "corrupt-pack": Case("a truncated or corrupt pack or index, a corrupt loose object",
                         (G + "test_a_truncated_pack_is_one_clean_error",
                          G + "test_a_truncated_pack_index_is_one_clean_error",
                          G + "test_bytes_flipped_inside_the_packed_blob_name_the_file",
                          G + "test_a_corrupt_loose_object_names_the_file"), slow=True),
    "gitlink": Case("a gitlink at a CMake path or any surface path is a changed row",
                    (G + "test_a_gitlink_at_a_cmake_path_in_a_real_repository",
                     G + "test_a_gitlink_where_a_surface_file_should_be_is_a_changed_row"),
                    slow=True),
    "unreadable-worktree-file": Case("an unreadable work-tree file is named (--worktree)",
                                     (G + "test_an_unreadable_work_tree_file_is_named",),
                                     slow=True),
    "worktree-special-files": Case("an untracked FIFO, socket or device is skipped with a note",
                                   (G + "test_special_files_are_skipped_unread_with_a_note",),
                                   slow=True),
    "worktree-loop-and-vanish": Case("a symlink loop; a file vanishing between list and read",
                                     (G + "test_a_symlink_loop_in_the_work_tree_is_read_as_a_"
                                      "link",
                                      G + "test_a_file_that_vanishes_between_listing_and_"
                                      "reading"), slow=True),
    "output-target": Case("-o naming a folder, a read-only folder or a full disk",
                          (C + "test_output_to_a_folder_or_a_full_disk_is_one_clean_line",)),
    "forged-verdict-path": Case("a path holding a verdict line prints escaped",
                                (C + "test_a_path_holding_a_forged_verdict_line_prints_"
                                 "escaped",)),
    # Issue 25: every sink escapes what a hostile change names
    "sink-text": Case("U+2028, U+202E, ESC and C1 in a path print as escapes in the text report",
                      (W + "test_the_text_report_escapes_every_control_and_keeps_one_verdict",
                       W + "test_printable_covers_every_control_separator_and_format_"
                       "character")),
    "sink-markdown": Case("raw HTML, backticks and pipes of a path or argument in the card",
                          (W + "test_the_review_card_renders_no_markup_of_the_change",
                           W + "test_a_code_span_holds_its_text_whatever_backticks_it_has",
                           W + "test_markdown_text_is_literal")),
    "sink-job-summary": Case("raw HTML and controls of a branch name in the job summary",
                             (W + "test_the_job_summary_escapes_the_branch_names",)),
    "sink-annotations": Case("controls of a path in a workflow command's property or message",
                             (W + "test_annotations_are_one_command_a_line_and_escape_"
                              "controls",)),
    "sink-sarif": Case("controls of a path in a SARIF message",
                       (W + "test_sarif_messages_carry_no_control_and_keep_the_real_paths",)),
    # Issue 25: what the parent reads back is a regular file of a bounded size, or nothing
    "parent-reads-child-document": Case(
        "a FIFO, /dev/zero or a secret linked at a child's document: the child failed",
        (P + "test_a_child_document_that_is_not_a_regular_file_is_a_crash",
         P + "test_read_regular_refuses_all_but_a_regular_file",
         P + "test_read_regular_caps_the_size",
         P + "test_dev_zero_where_the_parent_reads_costs_it_no_memory")),
    "parent-reads-reads-record": Case(
        "a FIFO or /dev/zero linked at a child's reads record: nothing it built is stored",
        (P + "test_a_reads_record_that_is_not_a_regular_file_stores_nothing",)),
    "parent-reads-cache-entry": Case(
        "a FIFO, /dev/zero or a link where a cache entry lies: a miss",
        (P + "test_a_cache_entry_that_is_not_a_regular_file_is_a_miss",
         P + "test_a_secret_linked_as_an_entry_is_never_a_hit")),
    "child-nproc-fsize": Case("the emitter child's processes and file sizes are bounded",
                              (L + "test_the_child_limits_name_processes_and_file_size",
                               L + "test_the_jail_sets_nproc_and_fsize",
                               L + "test_a_child_writing_past_its_file_size_limit_is_ended",
                               L + "test_a_fork_bomb_stops_at_the_process_limit")),
    "merged-renames": Case("a rename on one side meets a change of the other: conflicted",
                           (N + "test_a_rename_on_the_tip_and_an_edit_on_the_head_is_a_conflict",
                            N + "test_a_rename_on_the_head_and_an_edit_on_the_tip_is_a_conflict",
                            N + "test_a_file_added_into_a_folder_the_tip_renamed_is_a_conflict",
                            N + "test_a_file_the_tip_adds_into_a_folder_the_head_renamed_is_a_"
                            "conflict",
                            N + "test_renames_that_meet_no_change_of_the_other_side_are_clean")),
    "validate-reads": Case("a FIFO for a bench log or an identity record under validate",
                           (P + "test_a_bench_command_that_swaps_its_log_for_a_fifo_fails_its_"
                            "round",
                            P + "test_a_fifo_among_the_identity_records_is_skipped")),
    "validate-abort": Case("os.abort() in a head test reads BLOCK; a FIFO JUnit file is unread",
                           (V + "test_a_head_test_that_aborts_is_a_block",
                            V + "test_a_junit_path_holding_a_fifo_or_a_device_is_unreadable")),
    # Issue 25: validate runs the head's code confined, with the base's harness
    "validate-confined": Case(
        "validate's tests and bench commands write only their side's scratch folder; the "
        "user's home and impact's caches are hidden; a signal reads as the signal and a "
        "timeout ends the tree; the GPU's device nodes pass through",
        (VC + "test_a_confined_command_writes_only_its_scratch_folder",
         VC + "test_the_users_home_and_impacts_caches_are_hidden",
         VC + "test_a_signal_reads_as_the_signal_and_a_timeout_ends_the_tree",
         VC + "test_device_nodes_named_by_the_caller_pass_through",
         VC + "test_no_network_unless_asked"), needs=("user namespaces",)),
    "validate-build-confined": Case(
        "the head's own build script (run by validate's install step) cannot write the "
        "user's home or impact's caches",
        (VT + "test_a_head_build_backend_runs_confined",),
        needs=("user namespaces",), slow=True),
    "validate-isolation-recorded": Case(
        "where the kernel refuses namespaces, validate's isolation level says so "
        "(environment.isolation, never 'scratch-folders')",
        (VC + "test_without_namespaces_the_level_says_so",
         VT + "test_isolation_is_recorded_as_the_jail_reported_it"), slow=True),
    "validate-environment": Case(
        "validate's tests get a minimal environment: no token, HOME and XDG folders of "
        "their side's own",
        (VC + "test_the_environment_is_minimal_and_its_home_is_the_sides",
         VT + "test_tests_get_a_minimal_environment"), slow=True),
    "validate-fact-cache": Case(
        "head code run by validate cannot forge impact's fact cache (another repository's "
        "break stays BREAKS) or write the user's home",
        (VT + "test_the_head_cannot_forge_impacts_fact_cache",
         VT + "test_the_head_cannot_write_the_users_home"),
        needs=("user namespaces",), slow=True),
    "validate-harness-from-base": Case(
        "a head conftest.py, root sitecustomize.py or pytest.ini cannot hide a failing test",
        (VT + "test_a_head_conftest_that_turns_failures_into_passes_is_not_run",
         VT + "test_a_root_sitecustomize_cannot_swap_the_package",
         VT + "test_a_pytest_config_of_the_head_is_not_read",
         VT + "test_a_conftest_the_head_build_plants_is_not_run"), slow=True),
    "validate-edited-tests": Case(
        "a test file the head edits is flagged and is never the only evidence of a pass",
        (VT + "test_a_head_edited_test_is_never_the_only_evidence",
         V + "test_a_pass_in_a_head_edited_test_or_beside_an_edited_helper_is_no_evidence"),
        slow=True),
    "validate-results-channel": Case(
        "head code cannot rewrite the results validate reads or the identity hook",
        (VT + "test_the_results_are_not_the_heads_to_write",
         VT + "test_the_identity_hook_is_not_head_writable"),
        needs=("user namespaces",), slow=True),
    "sandbox-ipc-uts-dev-tty": Case(
        "the emitter's child sees no host SysV shm, has its own hostname, a minimal /dev "
        "(no kvm, console or tty) and no terminal",
        (S + "test_cannot_reach_host_sysv_shared_memory",
         S + "test_the_child_has_a_hostname_of_its_own",
         S + "test_a_minimal_dev_without_kvm_console_or_tty",
         VC + "test_ipc_uts_dev_and_tty_from_inside"),
        needs=("user namespaces",), slow=True),
    "billion-laughs": Case("a billion-laughs profile or .dvc fails fast and small",
                           (R + "test_billion_laughs_fails_fast_and_small",
                            R + "test_profile_with_an_anchor_or_alias_is_refused",
                            R + "test_yaml_node_budget")),
    "huge-python": Case("a huge Python file is refused as too large, quickly",
                        (R + "test_a_file_over_the_size_limit_is_too_large_to_read",
                         R + "test_a_large_python_file_is_refused_quickly")),
    "stderr-flood": Case("a child flooding stderr does not grow the parent",
                         (S + "test_a_child_flooding_stderr_does_not_grow_the_parent",
                          S + "test_bounded_output_keeps_both_ends_and_the_progress"),
                         needs=("/proc",), slow=True),
    "ulimit-v": Case("impact emit under a lower address-space hard limit",
                     (S + "test_emit_under_a_lower_address_space_hard_limit",
                      S + "test_limits_never_ask_beyond_the_hard_limit"), slow=True),
    "bad-cli-input": Case("bad revisions, flags and repositories are one line, exit 3",
                          ("test_cli.py::test_bad_input_is_one_line_and_exit_3",
                           "test_cli.py::test_not_a_repository_exit_3",
                           "test_cli.py::test_shallow_clone_exit_3",
                           "test_cli.py::test_usage_error_is_exit_3")),
}


def _params():
    for name, case in CASES.items():
        marks = [pytest.mark.slow] if case.slow else []
        yield pytest.param(case, id=name, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_fault_case(case: Case) -> None:
    for need in case.needs:
        if not PROTECTIONS[need]():
            pytest.skip(f"depends on {need}, which this system does not give")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         *(str(TESTS / node) for node in case.tests)],
        capture_output=True, text=True, cwd=TESTS.parent, timeout=600)
    tail = done.stdout[-3000:] + done.stderr[-1000:]
    assert done.returncode == 0, f"{case.what}:\n{tail}"
    assert " passed" in done.stdout and " error" not in done.stdout, tail


def test_every_case_names_tests_that_exist() -> None:
    """A renamed test cannot silently drop a case from the suite."""
    nodes = sorted({node for case in CASES.values() for node in case.tests})
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-o", "addopts=", *(str(TESTS / node) for node in nodes)],
        capture_output=True, text=True, cwd=TESTS.parent, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_every_dependency_has_a_probe() -> None:
    assert {need for case in CASES.values() for need in case.needs} <= set(PROTECTIONS)


def test_an_emit_file_of_deeply_nested_brackets_is_exit_3(tmp_path) -> None:
    """The one case with no home elsewhere: 100,000 nested brackets in an --emit file."""
    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = outcome(tmp_path / "r", worktree=True, emit=str(deep))
    assert code == EXIT_BAD_INPUT, err
    assert err.startswith("impact: error: ") and "Traceback" not in err

"""`impact validate` and `impact verify`: run the device runs a report asks for, on one
locked idle GPU, and write a verdict that never calls an unproven run a PASS.

Maintainers: one module per job (gpus: metric backends; claim: idle selection and the
lock; materialise: revisions into scratch folders; correctness, perf: the runs and their
parsing; identity: what the test process loaded; verdict: the one verdict function;
document: the validation_report.json; run: the stages in order; verify: one command).
Nothing outside impact.cli imports this package; it reads git only through impact.git.
"""

# An example of the schema of metrics/default.yaml: a taxonomy telling a viewer how to show the
# metrics of this database. Copy it beside default.yaml under another name (say mine.yaml),
# edit it, and choose it in the viewer. Lines starting with '#' are comments.

# The version of the schema.
version: 0

# inputs: the metric values the database holds, each named once with an anchor (&name) so that
# formulas below can refer to it (*name).
inputs:
  # metric: the metric's name as meta.db gives it.
  # scope: which propagation scope of it: point, function, lex_aware or execution.
  # formula and combine: how the threads' values were summarized ($$ is the value of a thread;
  #   combine is sum, min or max).
  - &time-inclusive
    metric: CPUTIME (sec)
    scope: execution
    formula: $$
    combine: sum
  - &time-exclusive
    metric: CPUTIME (sec)
    scope: function
    formula: $$
    combine: sum
  - &time-exclusive-loops
    metric: CPUTIME (sec)
    scope: lex_aware
    formula: $$
    combine: sum

# roots: the metrics as the viewer lists them; a metric may hold others (children: [...]) to
# make a tree.
roots:
  - name: CPU time
    description: Time the CPU spent running the program, in seconds.
    # variants: the ways of showing the metric, the first being the default.
    variants:
      Sum:
        # render: how a cell is drawn: number, percent, or both.
        render: [number, percent]
        formula:
          # inclusive: the value of a context with everything it calls.
          inclusive:
            standard: *time-inclusive
          # exclusive: the value of the context alone; custom is shown for loops and lines.
          exclusive:
            custom: *time-exclusive-loops
            standard: *time-exclusive

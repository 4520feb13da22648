"""Rounding noise inside a program: the reference evaluated with random rounding.

A bound computed at the output from the reference's own rounding cannot see rounding noise
that crosses a discontinuity inside the program: AdamW's first update is `lr * sign(g)`, and
where `g` nearly cancels, legal rounding flips its sign, so the update moves by `2 lr`. This is
Monte Carlo arithmetic's *random rounding* (as CESTAC/CADNA and Verificarlo use it): the f64
shadow of the reference is evaluated `SAMPLES` times, and each rounding operation's result is
moved by a random fraction (-1 to 1) of one ulp of the type it is declared in, the rounding its
own precision allows (a convert to bf16 by a bf16 ulp, an f32 add by an f32 ulp). The seeds are
fixed, so the samples are the same on every run and machine.

Where a sample lands on the other side of a discontinuity (compare, sign, floor/ceil/round,
convert to an integer or pred, sort, a variadic reduce such as argmax) everything downstream of
that element takes the other side's value in that sample too: the samples' spread per element
is the noise, large exactly downstream of such an element and about the rounding elsewhere.
A domain boundary is such a discontinuity too: `sqrt`, `log` or `pow` of an operand within
rounding of it is NaN in some samples and finite in others (AdamW's second moment near 0
on random data), so a float result whose NaN-ness differs between samples flips as well.
Random samples rarely land a value that is within its noise of a threshold on its other side,
yet real XLA may (its bf16 sums stray further than one rounding). A last, deterministic *split
sample* goes there: the f64 reference without random rounding, where a float compare whose
operands are within `REACH` times their samples' spread of each other answers the other way,
floor, ceil, round and a convert to an integer whose operand is that near a step answer from
its other side, a sort, top-k or argmax whose keys nearly tie runs with them swapped, and a
value whose sign a decided steep op follows (AdamW's
m / (sqrt(v) + eps)) is moved across zero where it is made (`split_candidates`). Its NaNs are
not legal (it crosses thresholds one at a time). The *domain sample*, after it, moves only the
values whose sign decides whether sqrt, rsqrt, log or a fractional power is defined, where
they are made, and answers every other threshold as its moved operands do: its NaNs are legal.

`Noise` keeps the per-element range of the samples (not the samples), where some sample was
NaN, and the discontinuities whose outputs differed between samples or that the split sample
moved, by instruction.

The parts, each of one responsibility: `model` (the result types), `op_kinds` (which ops
round, which are discontinuous, the float types), `random_rounding` (the draws and how a value
or an accumulating dot is moved), `recorder` (what the samples keep), `split_sample` (where
the split sample may move values, and its moves), `noisy_interpreter` (the evaluator that
rounds at random and reports to the recorder), `budget` (what the stage keeps within the
memory limit) and `run` (`noise_of`, the stage's driver).
"""

-- Valid configs in a seeded random order, without repeats, up to
-- opts.max_evals: a fair sample when the space is too large to try whole.
-- The order is drawn lazily (space:shuffled), so a large space costs only
-- the configs it reaches. Uniform: random search is the baseline, priors
-- do not bend it.
return {
  new = function(space, opts) return space:shuffled(opts.rng, opts.max_evals) end,
}

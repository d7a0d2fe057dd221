-- Every valid config in enumeration order (up to opts.max_evals), checking
-- the constraints as the walk meets each one.
return {
  new = function(space, opts) return space:walk(opts.max_evals) end,
}

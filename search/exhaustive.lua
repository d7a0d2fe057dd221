-- Every valid config, in enumeration order (up to opts.max_evals).
return {
  new = function(space, opts) return space:walk(nil, opts.max_evals) end,
}

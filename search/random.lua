-- Valid configs in a seeded random order, without repeats, up to
-- opts.max_evals: a fair sample when the space is too large to try whole.
return {
  new = function(space, opts)
    local order = {}
    for i = 1, space.size do order[i] = i end
    for i = space.size, 2, -1 do
      local j = opts.rng:int(i)
      order[i], order[j] = order[j], order[i]
    end
    return space:walk(order, opts.max_evals)
  end,
}

-- Row maxima for few long rows: each row split across blocks, partials combined
-- by the last block of the row (workspace: a ticket per row and the partials).
return lib("rows").split_family(OP, "CMax", "split")

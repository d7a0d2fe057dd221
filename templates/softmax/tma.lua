-- softmax with each row staged in shared memory by TMA bulk copies, one block or a
-- cluster of blocks per row (templates/lib/staged.lua).
return lib("staged").family(OP, "softmax", "tma")

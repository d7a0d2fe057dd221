# bench/suites/decode.sh: GEMM where cuBLAS is weak: decode (m <= 64, the
# weights streamed once, timed back to back over rotating copies), skinny
# and unaligned shapes, a ragged last wave.
about="decode, skinny, unaligned and ragged GEMM (gemv, rowdot, swapab, wgmma), against cuBLAS timed the same way"
spec=specs/gemm-decode.yaml
peers="cuBLAS (F.linear / torch.matmul), bench/peers_gemm.py --stream: back to back over rotating copies of every input, as the spec's timing: stream; same call"
metric="TB/s of weights read (m <= 64) or TFLOP/s; x cuBLAS"
bar="16x4096^2 nt >= 2.6 TB/s and >= 1.2x; 16x8192^2 nt >= 2.6 TB/s; 1x4096^2 >= 2.5 TB/s; 128x8192^2 >= 1.1x; 4096x4097x4096 and 4001^3 >= 4x; ragged 2176x3200x4096 >= 1.1x"
gpus=1
minutes=9
command="bench/gemm.sh OUT specs/gemm-decode.yaml --stream"
needs="$spec bench/gemm.sh bench/peers_gemm.py bench/suites/gemm.sh"

measure() { local out=$1; shift; bench/gemm.sh "$out" specs/gemm-decode.yaml --stream "$@"; }

rows() {
    # The table parser is the gemm suite's (one owner).
    ( . "$SUITES/gemm.sh" && gemm_rows "$1/gemm-table.txt" tbps )
}

#!/usr/bin/env bash
# ctest `mpi` (MPI builds only, -DCCREPLAY_MPI=ON): `sweep` and `compare`
# (on either engine) spread over 2 and 3 ranks write the serial run's bytes
# (table, CSV, JSON); an error raised on rank 1 fails the job with the
# serial run's message and no output file; any other command under
# mpirun is a usage error.
# Usage: tests/mpi/check.sh CCREPLAY_BINARY MPIEXEC SCRATCH_DIR
set -euo pipefail
# One machine: OpenMPI over shared memory only, without the cross-memory
# attach that containers often forbid (ignored by other MPIs).
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
bin="$1"
mpirun=("$2" --allow-run-as-root --oversubscribe)
scratch="$3"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"
fail() { echo "mpi: $*"; exit 1; }
same() {  # same BASE1 BASE2: every output of the two runs byte for byte
  for ext in txt csv json; do
    cmp "$1.$ext" "$2.$ext" || fail "$1.$ext and $2.$ext differ"
  done
}

grid=(sweep --op allreduce,allgather -b 1K -e 64K -f 8 --algo ring,hd
      --n 4,8 --topology ring,switch)
"$bin" "${grid[@]}" -j 1 --csv serial.csv --json serial.json > serial.txt
[ "$(grep -vc '^#' serial.txt)" -eq 48 ] || fail "serial sweep: not 48 rows"
for np in 2 3; do
  for j in 1 2; do
    "${mpirun[@]}" -np "$np" "$bin" "${grid[@]}" -j "$j" \
      --csv "np$np-j$j.csv" --json "np$np-j$j.json" > "np$np-j$j.txt"
    same serial "np$np-j$j"
  done
done

cells=(compare --op allgather --n 8 --bytes 256K --algo ring,rd,hd
       --topology ring,fullmesh,switch)
"$bin" "${cells[@]}" -j 1 --csv cserial.csv --json cserial.json > cserial.txt
"${mpirun[@]}" -np 2 "$bin" "${cells[@]}" --csv cnp2.csv --json cnp2.json \
  > cnp2.txt
same cserial cnp2
# The fluid engine's cells spread the same way.
"$bin" "${cells[@]}" --engine fluid -j 1 --csv fserial.csv \
  --json fserial.json > fserial.txt
"${mpirun[@]}" -np 2 "$bin" "${cells[@]}" --engine fluid --csv fnp2.csv \
  --json fnp2.json > fnp2.txt
same fserial fnp2

# More ranks than points: two ranks have nothing to run.
one=(sweep --op allreduce -b 1K -e 1K --n 4)
"$bin" "${one[@]}" --csv one1.csv --json one1.json > one1.txt
"${mpirun[@]}" -np 3 "$bin" "${one[@]}" --csv one3.csv --json one3.json \
  > one3.txt
same one1 one3

# The torus points fail (3 x 3 is not 8 chips); the shares of 2 ranks
# (cli/point.h PointsOfRank: the largest first, each to the least loaded,
# the lower rank on a tie) put both ring points on rank 0 and both torus
# points on rank 1, so rank 0 reports rank 1's error, as a serial run does.
failing=(sweep --op allreduce -b 1K -e 8M -f 8192 --n 8
        --topology ring,torus2d:3x3)
set +e
"$bin" "${failing[@]}" --json e1.json > e1.txt 2> e1.err
serial_rc=$?
"${mpirun[@]}" -np 2 "$bin" "${failing[@]}" --json e2.json > e2.txt 2> e2.err
mpi_rc=$?
"${mpirun[@]}" -np 2 "$bin" replay none.pb > u.txt 2> u.err
usage_rc=$?
set -e
[ "$serial_rc" -eq 1 ] || fail "serial failing sweep exited $serial_rc, not 1"
[ "$mpi_rc" -eq 1 ] || fail "spread failing sweep exited $mpi_rc, not 1"
line="$(head -1 e1.err)"
grep -q "ring on torus2d:3x3: " <<< "$line" || fail "serial error: $line"
grep -qF "$line" e2.err || fail "spread error differs: $(head -3 e2.err)"
[ ! -e e1.json ] && [ ! -e e2.json ] || fail "a failed sweep wrote its JSON"
[ "$usage_rc" -eq 2 ] || fail "replay under mpirun exited $usage_rc, not 2"
grep -q "only \`sweep\` and \`compare\` run" u.err || fail "$(cat u.err)"
# Only rank 0 prints: a help text appears once.
"$bin" sweep --help > help1.txt
"${mpirun[@]}" -np 2 "$bin" sweep --help > help2.txt
cmp help1.txt help2.txt || fail "sweep --help under mpirun is not printed once"
echo "mpi: sweeps over 2 and 3 ranks and compare over 2 wrote the serial bytes;" \
     "rank 1's error, one help text and the usage error as expected"

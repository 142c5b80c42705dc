# --batch scale-out (issue 32): shards by a stable hash of each line's id (not the line order),
# defaults from Slurm job arrays and Kubernetes indexed Jobs, outputs NAME-0000K-of-0000N.jsonl, a
# manifest beside each whose "run" objects are equal when the shards ran the same thing.
source "$(dirname "$0")/lib.sh"
M="$FIX/stories260K/stories260K.gguf"
export RUN_OPT M

sorted_no_ms() {   # output file -> its lines sorted by id, without the timing and line fields
    python3 -c "
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda o: str(o['id']))
for o in rows: o.pop('ms', None); o.pop('line', None); print(json.dumps(o))" "$1"
}

python3 -c "
import json
for i in range(40): print(json.dumps({'id': 'item-%d' % i, 'prompt': 'Once upon a time', 'max_tokens': 3 + i % 5}))" >"$TMP/ids.jsonl"
"$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" -o "$TMP/all.jsonl" -t 1 --quiet
mkdir -p "$TMP/slurm" "$TMP/k8s"
for task in 1 2 3 4; do   # sbatch --array=1-4
    SLURM_ARRAY_TASK_ID=$task SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=4 SLURM_ARRAY_TASK_COUNT=4 \
        "$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" -o "$TMP/slurm/out.jsonl" -t 1 2>>"$TMP/slurm.err"
    echo "rc $?" >>"$TMP/slurm.rc"
done
for index in 0 1 2 3; do
    JOB_COMPLETION_INDEX=$index "$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" -o "$TMP/k8s/out.jsonl" --shards 4 -t 1 --quiet
    "$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" -o "$TMP/explicit.jsonl" --shard $index/4 -t 1 --quiet
done
check "a Slurm array 1-4: each task names its shard (from SLURM_ARRAY_TASK_ID), writes out-0000K-of-00004.jsonl, exits 0" \
    bash -c "[ \$(grep -c 'shard [0-3] of 4 (from SLURM_ARRAY_TASK_ID)' '$TMP/slurm.err') -eq 4 ] && [ \$(grep -c 'rc 0' '$TMP/slurm.rc') -eq 4 ] &&
             ls '$TMP'/slurm/out-0000[0-3]-of-00004.jsonl >/dev/null"
same_split() {
    for k in 0 1 2 3; do
        f=out-0000$k-of-00004.jsonl
        cmp -s <(sorted_no_ms "$TMP/slurm/$f") <(sorted_no_ms "$TMP/k8s/$f") || return 1
        cmp -s <(sorted_no_ms "$TMP/slurm/$f") <(sorted_no_ms "$TMP/explicit-0000$k-of-00004.jsonl") || return 1
    done
    cat "$TMP"/slurm/out-*-of-00004.jsonl >"$TMP/merged.jsonl"
    cmp -s <(sorted_no_ms "$TMP/merged.jsonl") <(sorted_no_ms "$TMP/all.jsonl")
}
check "Slurm, Kubernetes (JOB_COMPLETION_INDEX + --shards) and --shard K/N split the lines alike; merged, they equal the unsharded run" same_split
check "the split follows the ids, not the line order: the same lines shuffled land in the same shards" python3 - "$TMP" <<'EOF'
import json, os, random, subprocess, sys
tmp = sys.argv[1]
lines = open(tmp + "/ids.jsonl").read().splitlines()
random.Random(5).shuffle(lines)
open(tmp + "/shuffled.jsonl", "w").write("\n".join(lines) + "\n")
ok = True
for k in range(4):
    subprocess.run([os.environ["RUN_OPT"], os.environ["M"], "--batch", tmp + "/shuffled.jsonl", "-o", tmp + "/sh.jsonl",
                    "--shard", "%d/4" % k, "-t", "1", "--quiet"], check=True)
    a = {json.loads(l)["id"] for l in open(tmp + "/sh-%05d-of-00004.jsonl" % k)}
    b = {json.loads(l)["id"] for l in open(tmp + "/slurm/out-%05d-of-00004.jsonl" % k)}
    ok &= a == b and len(a) > 0
sys.exit(0 if ok else 1)
EOF
check "each shard's manifest: equal \"run\" objects (engine, model and input digests, options), its own index" python3 - "$TMP/slurm" <<'EOF'
import glob, json, sys
ms = [json.load(open(p)) for p in sorted(glob.glob(sys.argv[1] + "/out-*-of-00004.manifest.json"))]
runs = {json.dumps(m["run"], sort_keys=True) for m in ms}
ok = len(ms) == 4 and len(runs) == 1 and [m["shard"]["index"] for m in ms] == [0, 1, 2, 3]
r = ms[0]["run"]
ok &= len(r["model"]["digest"]) == 16 and len(r["input"]["digest"]) == 16 and r["engine"]["name"] == "tessera" and r["shards"] == 4
sys.exit(0 if ok else 1)
EOF
"$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" -o "$TMP/other.jsonl" --shard 0/4 --temp 0.5 --seed 3 -t 1 --quiet
check "... and a shard run with other options has another \"run\" (the same model)" python3 -c "
import json, sys
a = json.load(open('$TMP/slurm/out-00000-of-00004.manifest.json'))['run']
b = json.load(open('$TMP/other-00000-of-00004.manifest.json'))['run']
sys.exit(0 if a != b and a['model'] == b['model'] else 1)"
# resume inside a shard: the shard's own file
head -2 "$TMP/slurm/out-00001-of-00004.jsonl" >"$TMP/part.jsonl"
cp "$TMP/part.jsonl" "$TMP/slurm/out-00001-of-00004.jsonl"
SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=4 SLURM_ARRAY_TASK_COUNT=4 \
    "$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" -o "$TMP/slurm/out.jsonl" --resume -t 1 --quiet
check "--resume of a shard completes its own file" same_split
expect_error "JOB_COMPLETION_INDEX without --shards is refused, naming what to pass" "pass --shards N" \
    env JOB_COMPLETION_INDEX=2 "$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" -o "$TMP/x.jsonl"
expect_error "a Slurm array with a step is refused" "SLURM_ARRAY_TASK" \
    env SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=6 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_STEP=2 \
    "$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" -o "$TMP/x.jsonl"
expect_error "--shard with --shards is refused" "shards" "$RUN_OPT" "$M" --batch "$TMP/ids.jsonl" --shard 0/2 --shards 2

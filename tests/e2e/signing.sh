#!/usr/bin/env bash
# Signed bundles through the CLI (README "Signed bundles"): `vkqc keygen` writes a key pair and
# never overwrites one; `compile --sign-key` and `vkqc sign` sign; `inspect` names the signer and,
# with --trusted-key, verifies; `run`/`bench`/`generate --trusted-key` load only bundles signed by
# a trusted key and unchanged since (the outputs still match the CPU reference); OpenSSL's Ed25519
# PEM keys work both ways (OpenSSL as an independent key generator, and as an independent check
# that the public key vkqc derives is the one OpenSSL derives); every refusal is a clear error.
#
# usage: bash signing.sh <path-to-vkqc> <source-dir> <work-dir>
source "$(dirname "$0")/common.bash" "$@"

MODEL=$WORK/mlp.vkqg
expect_writes "import the example" "$MODEL" import "$SRC/examples/mlp/graph.json" -o "$MODEL"

# -- keys ------------------------------------------------------------------------------------
expect_writes "keygen writes a key pair" "$WORK/team.key" keygen -o "$WORK/team"
mode=$(stat -c %a "$WORK/team.key")
if [ "$mode" = 600 ] && grep -q "BEGIN PRIVATE KEY" "$WORK/team.key" && grep -q "BEGIN PUBLIC KEY" "$WORK/team.pub"; then
  ok "the private key is PEM, mode 600; the public key is PEM"
else
  fail "key files" "mode $mode" "$(cat "$WORK/team.pub")"
fi
cp "$WORK/team.key" "$WORK/team.key.orig"
expect_error "keygen never overwrites a key" "exists" -- keygen -o "$WORK/team"
cmp -s "$WORK/team.key" "$WORK/team.key.orig" && ok "the existing key is untouched" || fail "the existing key is untouched"
vk keygen -o "$WORK/other"

# -- compile, inspect, run ---------------------------------------------------------------------
COMPILE=(compile "$MODEL" --target lavapipe --tokens 4)
expect_writes "compile --sign-key" "$WORK/signed.vkqb" "${COMPILE[@]}" -o "$WORK/signed.vkqb" --sign-key "$WORK/team.key"
out_has "signed" && ok "compile says it signed" || fail "compile says it signed" "$(last_run_report)"
expect_writes "compile unsigned" "$WORK/plain.vkqb" "${COMPILE[@]}" -o "$WORK/plain.vkqb"
pubhex=$(grep -o 'public key (ed25519): [0-9a-f]*' "$WORK/log/2.out" | awk '{print $4}')
vk inspect "$WORK/signed.vkqb"
if [ "$RC" -eq 0 ] && [ -n "$pubhex" ] && out_has "signature: signed by ed25519 key $pubhex"; then
  ok "inspect names the signer (the key keygen printed)"
else
  fail "inspect names the signer" "keygen printed '$pubhex'" "$(last_run_report)"
fi
vk inspect "$WORK/signed.vkqb" --trusted-key "$WORK/team.pub"
out_has "verified against --trusted-key" && ok "inspect --trusted-key verifies" || fail "inspect --trusted-key verifies" "$(last_run_report)"
vk inspect "$WORK/plain.vkqb"
out_has "signature: unsigned" && ok "inspect of an unsigned bundle" || fail "inspect of an unsigned bundle" "$(last_run_report)"

expect_pass "run --trusted-key: the signed bundle loads and matches the CPU reference" \
  run "$WORK/signed.vkqb" --trusted-key "$WORK/team.pub" --reference "$MODEL" --validation
expect_pass "several --trusted-key: any of them" \
  run "$WORK/signed.vkqb" --trusted-key "$WORK/other.pub" --trusted-key "$WORK/team.pub" --reference "$MODEL"
expect_error "run --trusted-key refuses an unsigned bundle" "signature check failed" "not signed" -- \
  run "$WORK/plain.vkqb" --trusted-key "$WORK/team.pub"
expect_error "run --trusted-key refuses another signer" "not among the trusted keys" -- \
  run "$WORK/signed.vkqb" --trusted-key "$WORK/other.pub"
expect_error "bench --trusted-key refuses another signer" "not among the trusted keys" -- \
  bench "$WORK/signed.vkqb" --trusted-key "$WORK/other.pub" --min-ms 1
expect_error "generate --trusted-key refuses an unsigned bundle" "not signed" -- \
  generate "$WORK/plain.vkqb" --prompt-ids 1 --trusted-key "$WORK/team.pub"
expect_error "inspect --trusted-key refuses another signer" "not among the trusted keys" -- \
  inspect "$WORK/signed.vkqb" --trusted-key "$WORK/other.pub"

# A changed weight byte (not covered by the integrity checksum) and a changed shader byte with
# the checksums recomputed: only the signature tells.
cp "$WORK/signed.vkqb" "$WORK/tampered.vkqb"
size=$(stat -c %s "$WORK/tampered.vkqb")
printf '\x55' | dd of="$WORK/tampered.vkqb" bs=1 seek=$((size - 3)) conv=notrunc status=none
vk run "$WORK/tampered.vkqb"
[ "$RC" -eq 0 ] && ok "a weight byte changed: the bundle still loads without --trusted-key" || fail "tampered weights load unsigned" "$(last_run_report)"
expect_error "a weight byte changed: refused with --trusted-key" "changed after it was signed" -- \
  run "$WORK/tampered.vkqb" --trusted-key "$WORK/team.pub"

# -- vkqc sign ---------------------------------------------------------------------------------
expect_writes "sign an unsigned bundle" "$WORK/later.vkqb" sign "$WORK/plain.vkqb" --sign-key "$WORK/team.key" -o "$WORK/later.vkqb"
expect_pass "the bundle signed later runs" run "$WORK/later.vkqb" --trusted-key "$WORK/team.pub" --reference "$MODEL"
cp "$WORK/later.vkqb" "$WORK/inplace.vkqb"
vk sign "$WORK/inplace.vkqb" --sign-key "$WORK/other.key"
vk run "$WORK/inplace.vkqb" --trusted-key "$WORK/other.pub"
[ "$RC" -eq 0 ] && ok "re-signing in place replaces the signer" || fail "re-signing in place" "$(last_run_report)"
expect_error "the old signer no longer verifies" "not among the trusted keys" -- run "$WORK/inplace.vkqb" --trusted-key "$WORK/team.pub"

# -- bad keys ----------------------------------------------------------------------------------
expect_error "a public key is not a signing key (refused before compiling)" "--sign-key" "not an Ed25519 private key" -- \
  "${COMPILE[@]}" -o "$WORK/x.vkqb" --sign-key "$WORK/team.pub"
[ ! -e "$WORK/x.vkqb" ] && ok "no bundle written with a bad key" || fail "no bundle written with a bad key"
expect_error "a private key is not a trusted key" "--trusted-key" "not an Ed25519 public key" -- \
  run "$WORK/signed.vkqb" --trusted-key "$WORK/team.key"
expect_error "a missing key file" "cannot open" -- run "$WORK/signed.vkqb" --trusted-key "$WORK/nothing.pub"
expect_error "sign needs --sign-key" "usage: vkqc sign" -- sign "$WORK/plain.vkqb"
head -c 100 "$WORK/plain.vkqb" > "$WORK/short.vkqb"
expect_error "sign refuses a broken bundle" "invalid bundle" -- sign "$WORK/short.vkqb" --sign-key "$WORK/team.key"

# -- OpenSSL keys ------------------------------------------------------------------------------
if command -v openssl > /dev/null; then
  openssl genpkey -algorithm ed25519 -out "$WORK/ossl.key" 2> /dev/null
  openssl pkey -in "$WORK/ossl.key" -pubout -out "$WORK/ossl.pub" 2> /dev/null
  expect_writes "compile with an OpenSSL key" "$WORK/ossl.vkqb" "${COMPILE[@]}" -o "$WORK/ossl.vkqb" --sign-key "$WORK/ossl.key"
  expect_pass "run with OpenSSL's public key" run "$WORK/ossl.vkqb" --trusted-key "$WORK/ossl.pub" --reference "$MODEL"
  # keygen's files read by OpenSSL: the public key OpenSSL derives from vkqc's private key is
  # the one vkqc wrote.
  if openssl pkey -in "$WORK/team.key" -pubout 2> /dev/null | cmp -s - "$WORK/team.pub"; then
    ok "OpenSSL derives keygen's public key from keygen's private key"
  else
    fail "OpenSSL derives keygen's public key" "$(openssl pkey -in "$WORK/team.key" -pubout 2>&1)" "$(cat "$WORK/team.pub")"
  fi
else
  fail "openssl is installed (scripts/setup.sh installs it)" "command -v openssl: not found"
fi

finish

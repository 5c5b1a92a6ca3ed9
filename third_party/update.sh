#!/usr/bin/env bash
# Re-creates the header-only dependencies zero-bench carries (third_party/README.md)
# from Debian 12's packages, at the versions and checksums pinned below. Needs
# apt-get (not root: `apt-get download` fetches into the current folder) and
# dpkg-deb; the build itself never runs it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# package=version sha256-of-the-.deb  headers-folder  destination-root
pins=(
  "libcli11-dev=2.1.2+ds-1 f1f6ee9ec053e0e0bcec47345e241b6a8ee006321248b4329e9ce88d2b4b64a8 usr/include/CLI include"
  "nlohmann-json3-dev=3.11.2-2 ec57940def6b6186c30be0e0ee81d1e58f86d11a54a145b28686a1e3e4aae801 usr/include/nlohmann include"
  "libgloo-dev=0.0~git20220518.5b14351-3 80529c9fd8af452faf489e686b94bf87075965c40673803810c4f41634b1e299 usr/include/gloo gloo/include"
)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for pin in "${pins[@]}"; do
  read -r package sha folder dest <<<"$pin"
  name="${package%%=*}"
  (cd "$work" && apt-get download -q "$package" >/dev/null)
  deb="$(ls "$work"/"${name}"_*.deb)"
  echo "$sha  $deb" | sha256sum -c --quiet - || { echo "update.sh: $deb is not the pinned $package" >&2; exit 1; }
  dpkg-deb -x "$deb" "$work/$name"
  rm -rf "${here:?}/$dest/$(basename "$folder")"
  mkdir -p "$here/$dest" "$here/licenses"
  cp -r "$work/$name/$folder" "$here/$dest/"
  cp "$work/$name/usr/share/doc/$name/copyright" "$here/licenses/$name.copyright"
  rm "$deb"
done
# The checksums the build verifies before it uses the carried gloo headers.
(cd "$here/gloo/include" && find gloo -type f | LC_ALL=C sort | xargs sha256sum) >"$here/gloo/SHA256SUMS"
echo "third_party/: headers re-created from Debian's packages"

# Sourced by nvim012.sh, emacs30.sh and helix.sh: the one way they fetch a
# newer editor from Debian sid.
#
# sid_fetch SCRIPT DIR PACKAGE fetches PACKAGE and everything it depends on
# (glibc included) from Debian sid with apt-get into DIR/root, using its own
# package lists in DIR: nothing is installed on the system. It exits
# non-zero, saying why on stderr as SCRIPT, when apt-get or Debian's archive
# keyring is missing. The caller writes the wrapper that starts the editor
# with sid's own loader and libraries.
sid_fetch() {
  local script="$1" dir="$2" package="$3"
  if ! command -v apt-get >/dev/null || [[ ! -r /usr/share/keyrings/debian-archive-keyring.gpg ]]; then
    echo "$script: needs apt-get and Debian's archive keyring" >&2
    exit 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir/lists/partial" "$dir/debs" "$dir/root"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" >"$dir/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$dir/lists"
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" -qq update >&2
  local pkgs
  mapfile -t pkgs < <(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "$package" | grep -v '^[ <]' | sort -u)
  (cd "$dir/debs" && apt-get "${opts[@]}" -qq download "${pkgs[@]}" >&2)
  local d
  for d in "$dir"/debs/*.deb; do dpkg-deb -x "$d" "$dir/root"; done
  rm -rf "$dir/debs" "$dir/lists" # the packages; the unpacked root is what runs
}

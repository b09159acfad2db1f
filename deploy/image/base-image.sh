#!/usr/bin/env bash
# The container image's base, made without a container daemon or registry (none is reachable
# from the machines this project is built on): a Debian root file system from Debian's own
# mirror, made by mmdebstrap, holding the Java 17 runtime, bubblewrap (the workers' tool
# sandbox) and a non-root user, wrapped as a one-layer image tarball in the format `docker save`
# writes, which Jib takes as its base with `tar://FILE`.
#
#   deploy/image/base-image.sh [OUT]   prints the path of the base image tarball, building it
#                                      first when the cache does not have it
#
# Both the root file system and the image tarball are cached under
# ${PANOPTES_CACHE:-~/.cache/panoptes}, keyed by what goes into them, so a re-run takes a second; delete the folder to fetch newer Debian packages.
# Building needs mmdebstrap (installed with apt-get when missing and running as root) and root or
# working user namespaces. OUT, when given, receives a copy of (a hard link to) the tarball.
set -euo pipefail

suite=${PANOPTES_IMAGE_SUITE:-bookworm}
packages=openjdk-17-jre-headless,bubblewrap,ca-certificates
# The user the image runs as. Numeric, so that Kubernetes' runAsNonRoot can check it.
uid=10001
cache=${PANOPTES_CACHE:-$HOME/.cache/panoptes}
out=${1:-}

here=$(cd "$(dirname "$0")" && pwd)
# The root file system's key names what mmdebstrap is asked for (bump the "r1" when its hooks
# change); the image tarball's also covers this script, which writes its config.
rootfs_key=$(echo "$suite $packages $uid r1" | sha256sum | cut -c1-16)
image_key=$( { echo "$rootfs_key"; cat "$here/base-image.sh"; } | sha256sum | cut -c1-16)
rootfs="$cache/rootfs-$suite-$rootfs_key.tar"
image="$cache/base-image-$suite-$image_key.tar"
mkdir -p "$cache"

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if [ ! -s "$image" ]; then
  if [ ! -s "$rootfs" ]; then
    if ! command -v mmdebstrap >/dev/null 2>&1; then
      echo "base-image: installing mmdebstrap (Debian's package) to make the root file system" >&2
      sudo_if_needed apt-get update -qq
      DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq mmdebstrap >/dev/null
    fi
    echo "base-image: making a Debian $suite root file system with $packages (a few minutes, once)" >&2
    tmp="$rootfs.partial"
    # minbase: essential packages, apt and what $packages pull in; documentation dropped (but
    # man1 kept as an empty folder: the JRE's update-alternatives links its man page there).
    # /dev is left out of the tar: a container runtime provides its own.
    mmdebstrap --variant=minbase --include="$packages" \
      --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
      --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --customize-hook="chroot \"\$1\" useradd --uid $uid --user-group --create-home --home-dir /home/panoptes --shell /usr/sbin/nologin panoptes" \
      --customize-hook='chroot "$1" mkdir -p /app /data' \
      --customize-hook="chroot \"\$1\" chown $uid:$uid /data" \
      "$suite" - | mmtarfilter --path-exclude='/dev/*' > "$tmp"
    mv "$tmp" "$rootfs"
  fi

  # The `docker save` layout: the layer, its config (naming the layer by its digest) and
  # manifest.json. Jib reads this and appends its own layers (the jar) on top.
  work=$(mktemp -d "$cache/base-image.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  ln "$rootfs" "$work/layer.tar" 2>/dev/null || cp "$rootfs" "$work/layer.tar"
  digest=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
  arch=$(dpkg --print-architecture)
  case "$arch" in
    amd64|arm64) ;;
    *) echo "base-image: architecture $arch is not one this script names for images (amd64, arm64)" >&2; exit 2 ;;
  esac
  java_home=/usr/lib/jvm/java-17-openjdk-$arch
  cat > "$work/config.json" <<EOF
{"architecture":"$arch","os":"linux",
 "config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","JAVA_HOME=$java_home"],
           "User":"$uid:$uid","WorkingDir":"/data"},
 "rootfs":{"type":"layers","diff_ids":["sha256:$digest"]},
 "history":[{"created_by":"mmdebstrap --variant=minbase --include=$packages $suite (deploy/image/base-image.sh)"}]}
EOF
  echo '[{"Config":"config.json","RepoTags":["panoptes-base:'"$suite"'"],"Layers":["layer.tar"]}]' \
    > "$work/manifest.json"
  tar -C "$work" -cf "$image.partial" manifest.json config.json layer.tar
  mv "$image.partial" "$image"
fi

if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  rm -f "$out"
  ln "$image" "$out" 2>/dev/null || cp "$image" "$out"
fi
echo "$image"

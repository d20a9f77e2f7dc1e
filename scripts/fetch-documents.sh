#!/usr/bin/env bash
# Fetches real PDF and Word files for the PDF/Word ingest tests from package registries, each
# pinned by sha256, into real-docs/ (gitignored):
#   real-docs/pdf/   the R manuals, as Debian's r-doc-pdf ships them (pdfTeX, with outlines;
#                    fullrefman.pdf has 2,415 pages), and a password-protected copy of one,
#                    made with qpdf
#   real-docs/docx/  Word files from the docx2python sdist on PyPI (its test resources: a
#                    procedure with 19 tables, a 138,000-word specification with headings)
# Usage: scripts/fetch-documents.sh [DEST]   (DEST defaults to real-docs/ in the repository)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/real-docs}"
die() { echo "fetch-documents: $*" >&2; exit 2; }
sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (a Debian system is expected)"
command -v qpdf >/dev/null || die "qpdf is missing: install it (apt-get install qpdf)"
python3 -m pip --version >/dev/null 2>&1 || die "pip is missing: install python3-pip"

deb="r-doc-pdf=4.2.2.20221110-2"
deb_sha=beb104ad5818d261f280a868294645ca31d7c63365f2c9a55aa3ca9aad5aa71d
sdist="docx2python==3.5.0"
sdist_sha=2a9e8d3b0ecc21e0165ffb2e0cec70f75305853eb37db0f73ed9feb1e963f0c4
docx=("240-DOP-1013A Lay Down Tubulars.docx" "checked_boxes.docx" "imagedata_without_rid.docx" "zen_of_python.docx")

mkdir -p "$dest/pdf" "$dest/docx"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [ -f "$dest/pdf/.done-$deb_sha" ]; then
  echo "ok      $dest/pdf"
else
  (cd "$tmp" && { apt-get download "$deb" >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get download "$deb" >/dev/null 2>&1; }; }) \
    || die "could not download $deb from Debian's archive (is the package registry reachable?)"
  file="$(ls "$tmp"/r-doc-pdf_*.deb)"
  sha_ok "$file" "$deb_sha" || die "sha256 mismatch for $(basename "$file"): expected $deb_sha"
  dpkg-deb -x "$file" "$tmp/x"
  for f in R-intro R-data R-admin R-exts R-FAQ R-ints R-lang fullrefman; do
    cp "$tmp/x/usr/share/R/doc/manual/$f.pdf" "$dest/pdf/"
  done
  # A password-protected copy (AES-256; user password "reader").
  qpdf --encrypt reader owner 256 -- "$dest/pdf/R-data.pdf" "$dest/pdf/encrypted.pdf"
  touch "$dest/pdf/.done-$deb_sha"
  echo "fetched $dest/pdf"
fi

if [ -f "$dest/docx/.done-$sdist_sha" ]; then
  echo "ok      $dest/docx"
else
  python3 -m pip download --no-deps --quiet --no-binary=:all: -d "$tmp/sdist" "$sdist" \
    || die "could not download $sdist from PyPI (is the package registry reachable?)"
  file="$(ls "$tmp"/sdist/*.tar.gz)"
  sha_ok "$file" "$sdist_sha" || die "sha256 mismatch for $(basename "$file"): expected $sdist_sha"
  tar -xzf "$file" -C "$tmp"
  for f in "${docx[@]}"; do
    cp "$tmp/docx2python-3.5.0/tests/resources/$f" "$dest/docx/"
  done
  touch "$dest/docx/.done-$sdist_sha"
  echo "fetched $dest/docx"
fi

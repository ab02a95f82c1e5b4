#!/bin/sh
# Draws assets/icon.png (512×512): a document on a blue tile with a progress bar, JobDesk's
# picture of "a file becoming a finished job". Run once after changing it; needs ImageMagick.
set -e
cd "$(dirname "$0")"
convert -size 512x512 xc:none \
 -fill '#1F4FB5' -draw "roundrectangle 24,24 488,488 96,96" \
 -fill '#2E6BE6' -draw "roundrectangle 24,24 488,440 96,96" \
 -fill white -draw "polygon 150,96 310,96 378,164 378,360 150,360" \
 -fill '#C9D8F7' -draw "polygon 310,96 310,164 378,164" \
 -fill '#1F4FB5' -draw "roundrectangle 186,196 342,210 7,7" \
 -fill '#1F4FB5' -draw "roundrectangle 186,232 312,246 7,7" \
 -fill '#1F4FB5' -draw "roundrectangle 186,268 330,282 7,7" \
 -fill '#0B2F7A' -draw "roundrectangle 110,392 402,428 18,18" \
 -fill '#3DDC84' -draw "roundrectangle 110,392 318,428 18,18" \
 -depth 8 icon.png

#!/usr/bin/env python3
"""Renders a command's terminal output to a PNG (the README screenshot).
Usage: render_terminal_png.py OUT.png -- COMMAND ARGS..."""
import subprocess
import sys

from PIL import Image, ImageDraw, ImageFont


def main():
    out = sys.argv[1]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    text = "$ " + " ".join(["model-inspector"] + cmd[1:]) + "\n"
    text += subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 14)
    lines = text.rstrip("\n").split("\n")
    w = max(font.getlength(l) for l in lines) + 32
    h = 18 * len(lines) + 32
    img = Image.new("RGB", (int(w), h), (30, 30, 36))
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        colour = (120, 200, 255) if i == 0 else (
            (255, 210, 120) if line and not line[0].isspace() and not line.startswith("-")
            and i + 1 < len(lines) and lines[i + 1].startswith(("-", "file", "op", "stream", "node", "run", "framework"))
            else (225, 225, 225))
        draw.text((16, 16 + 18 * i), line, font=font, fill=colour)
    img.save(out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""bench/scale.sh: opens COUNT connections to HOST:PORT, 200 at a time, each answered an
ApiVersions; writes the connections per second to OUT and holds them open (up to 120 s) while
the script reads the broker's memory. Usage: scale-connections.py HOST:PORT COUNT OUT"""
import asyncio, struct, sys, time
host, port = sys.argv[1].split(":")
count, out = int(sys.argv[2]), sys.argv[3]
# ApiVersions v0: answered by any broker on any connection, so an answer means accepted and served.
request = struct.pack(">i", 10) + struct.pack(">hhih", 18, 0, 1, -1)
held = []
async def one():
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    size = struct.unpack(">i", await reader.readexactly(4))[0]
    await reader.readexactly(size)
    held.append(writer)
async def main():
    started = time.perf_counter()
    for at in range(0, count, 200):  # 200 at a time: a burst of clients, not one client
        await asyncio.gather(*(one() for _ in range(min(200, count - at))))
    took = time.perf_counter() - started
    with open(out, "w") as f:
        f.write(f"{count / took:.0f}\n")
    await asyncio.sleep(120)  # held open until the script has read the broker's memory
asyncio.run(main())

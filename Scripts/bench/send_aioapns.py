#!/usr/bin/env python3
"""aioapns (PyPI) sending the same notifications as `pushseal send --batch`, for
Scripts/bench.sh: one connection to the same server, 64 requests in flight (aioapns gives
up a request whose body finds the connection's 64 KiB flow-control window full instead of
waiting for it, so more in flight makes it fail, not go faster).

  send_aioapns.py PORT CACERT P8 KID TEAM TOPIC LINES.jsonl

Each line is {"device": …, "payload": {…}} (a ready APNs payload). Prints
"SENT OK SECONDS".
"""
import asyncio
import json
import ssl
import sys
import time

from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection


def main():
    port, cacert, p8, kid, team, topic, lines = sys.argv[1:8]
    # aioapns always dials Apple; point its production protocol at the bench's server.
    connection.APNsProductionClientProtocol.APNS_SERVER = "localhost"
    connection.APNsProductionClientProtocol.APNS_PORT = int(port)
    context = ssl.create_default_context(cafile=cacert)
    with open(p8) as source:
        key = source.read()
    with open(lines) as source:
        work = [json.loads(line) for line in source if line.strip()]

    async def send_all():
        client = APNs(key=key, key_id=kid, team_id=team, topic=topic, use_sandbox=False,
                      ssl_context=context, max_connections=1)
        room = asyncio.Semaphore(64)

        async def one(item):
            async with room:
                result = await client.send_notification(NotificationRequest(
                    device_token=item["device"], message=item["payload"], push_type=PushType.ALERT))
                return result.is_successful

        started = time.monotonic()
        results = await asyncio.gather(*(one(item) for item in work))
        return sum(results), time.monotonic() - started

    ok, seconds = asyncio.run(send_all())
    print(len(work), ok, f"{seconds:.3f}")


if __name__ == "__main__":
    main()

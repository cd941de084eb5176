"""A freedesktop notification service (org.freedesktop.Notifications) for tests, on a
private session bus: it answers Notify as a desktop would and writes each call as a JSON
line to the file named, then exits when the bus goes away or SIGTERM comes.

    notification_service.py LOG     (run under dbus-run-session; system python3, python3-dbus)
"""
import json
import signal
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"


class Notifications(dbus.service.Object):
    def __init__(self, bus, log):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.log = log
        self.next_id = 0

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout):
        self.next_id += 1
        entry = {"app_name": str(app_name), "summary": str(summary), "body": str(body),
                 "hints": {str(k): (int(v) if isinstance(v, (dbus.Byte, dbus.Int32, dbus.UInt32)) else str(v)) for k, v in hints.items()}}
        with open(self.log, "a") as out:
            out.write(json.dumps(entry) + "\n")
        return self.next_id

    @dbus.service.method(NAME, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body", "body-markup"]

    @dbus.service.method(NAME, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("pushseal-test", "pushseal", "1", "1.2")

    @dbus.service.method(NAME, in_signature="u", out_signature="")
    def CloseNotification(self, identifier):
        pass


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    service = Notifications(bus, sys.argv[1])
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    # The name last: once a client can see it, Notify is answered.
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    loop.run()
    del name, service


main()

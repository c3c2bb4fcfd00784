"""A mesh started on ports it chose itself survives one of them being taken meanwhile."""

from __future__ import annotations

import socket
from pathlib import Path

from memmesh.runtime.supervisor import Mesh


def test_mesh_starts_again_on_new_ports_when_a_chosen_port_is_taken(tmp_path: Path) -> None:
    mesh = Mesh(["ledger"], env={"MEMMESH_DATA_DIR": str(tmp_path)})
    taken = mesh.addrs["ledger"]
    host, port = taken.rsplit(":", 1)
    with socket.socket() as squatter:
        squatter.bind((host, int(port)))
        squatter.listen()
        with mesh:
            assert mesh.addrs["ledger"] != taken
            assert mesh.running["ledger"].process.poll() is None
    assert not mesh.running

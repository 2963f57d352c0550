"""flagos across processes (each case in a fresh interpreter): a child
forked after the parent initialised flagos cannot use it and says so with
one clear error; a child forked before initialisation, and a spawned one,
can."""

FORK_ERROR = "[flagos] Cannot re-initialize flagos in forked subprocess"


def test_forked_child_of_an_initialised_parent_is_poisoned(run_flagos):
    out = run_flagos(f"""
        import os
        x = torch.ones(4, device="flagos")  # initialises flagos in the parent
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            lines = []  # every use below catches its error: the child ends in os._exit
            for name, use in (("tensor", lambda: torch.ones(1, device="flagos")),
                              ("current_device", torch.flagos.current_device),
                              ("to", lambda: torch.ones(1).to("flagos"))):
                try:
                    use()
                    lines.append(name + ": no error")
                except RuntimeError as e:
                    lines.append(name + ": " + str(e).splitlines()[0])
            lines.append("cpu work: " + str(torch.ones(2).sum().item()))
            lines.append("count: " + str(torch.flagos.device_count()))
            lines.append("initialized: " + str(torch.flagos.is_initialized()))
            os.write(w, "\\n".join(lines).encode())
            os._exit(0)
        os.close(w)
        _, status = os.waitpid(pid, 0)
        child = os.read(r, 65536).decode()
        assert status == 0, status
        print(child)
        print("parent:", (x + 1).cpu().tolist())
    """)
    lines = out.splitlines()
    for name in ("tensor", "current_device", "to"):
        assert f"{name}: {FORK_ERROR}. To use flagos with multiprocessing, you must use the 'spawn' start method" in lines
    assert "cpu work: 2.0" in lines
    assert "initialized: False" in lines
    assert any(line.startswith("count: ") and int(line.split()[1]) > 0 for line in lines)
    assert "parent: [2.0, 2.0, 2.0, 2.0]" in lines


def test_multiprocessing_fork_child_gets_the_error(run_flagos):
    out = run_flagos("""
        import multiprocessing as mp

        def child(q):
            try:
                torch.zeros(1, device="flagos")
                q.put("no error")
            except RuntimeError as e:
                q.put(str(e))

        if __name__ == "__main__":
            torch.zeros(1, device="flagos")
            ctx = mp.get_context("fork")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(q.get(timeout=60))
            p.join()
    """)
    assert out.startswith("[flagos] Cannot re-initialize flagos in forked subprocess")


def test_fork_before_initialisation_is_fine(run_flagos):
    out = run_flagos("""
        import os
        assert not torch.flagos.is_initialized()
        pid = os.fork()
        if pid == 0:
            # The child always leaves through os._exit: an error is reported
            # by its status, never by a forked interpreter's shutdown.
            try:
                ok = (torch.arange(3.0, device="flagos") * 2).cpu().tolist() == [0.0, 2.0, 4.0]
            except BaseException as exc:
                os.write(2, ("child: " + repr(exc) + "\\n").encode())
                ok = False
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print("child status", os.waitstatus_to_exitcode(status))
        print("parent", torch.ones(1, device="flagos").cpu().item())
    """)
    assert out.splitlines() == ["child status 0", "parent 1.0"]


def test_spawned_children_use_flagos(run_flagos):
    out = run_flagos("""
        import multiprocessing as mp

        def child(device, q):
            x = torch.arange(4.0, device=device) + 1
            q.put((str(x.device), x.cpu().tolist()))

        if __name__ == "__main__":
            torch.zeros(1, device="flagos")  # the parent is initialised: spawn must not care
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            device = "flagos:%d" % (torch.flagos.device_count() - 1)
            p = ctx.Process(target=child, args=(device, q))
            p.start()
            got = q.get(timeout=100)
            p.join()
            assert p.exitcode == 0, p.exitcode
            print(got[0], got[1])
    """)
    device, values = out.split(" ", 1)
    assert device.startswith("flagos:")
    assert values.strip() == "[1.0, 2.0, 3.0, 4.0]"

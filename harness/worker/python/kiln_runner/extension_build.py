"""Building a load_inline extension in the compile stage."""

import os
import re

from kiln_runner.abi import PACKAGE
from kiln_runner.extension_sources import (
    ExtensionBuildError, _MISSING_DECLARATION, _first_error, _first_problem, _torch_paths,
    light_extension_headers,
)


class ExtensionBuild:
    """The compile stage's build of one extension (LoadInline): its units compiled at once, then
    linked with torch's libraries, in the order and with the flags torch's build.ninja has.

    <torch/extension.h> is all of torch's C++ API (the nn, optim and data frontend) plus pybind11 and
    Python.h, and parsing it is most of an extension's build. A unit that includes it is first
    compiled with a lighter header of the same name found first on its include path
    (light_extension_headers). When that fails, the unit is compiled with torch's own header only
    if its first error is plausibly a declaration the light header leaves out (full_header_cure):
    a name torch's headers declare, or an error inside a header; any other failure is the
    source's own and is reported at once, with the compiler's first error. So no source is
    refused that torch's load_inline builds, and a syntax error costs one compile. With cores to
    spare both compiles of a unit start at once and the first success, light first, is kept."""

    NVCC_COMMON = ["-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                   "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
                   "--expt-relaxed-constexpr"]
    _mentions = {}  # word -> the torch header that has it ("" for none), for the process

    def __init__(self, owner, spec, folder, lib):
        import time
        import torch.utils.cpp_extension as ext
        if spec["with_cuda"] and not owner.nvcc:
            raise ExtensionBuildError(spec["what"], "this node has no nvcc for CUDA sources", "")
        if spec["with_cuda"] and owner.torch.version.cuda is None:
            raise ExtensionBuildError(spec["what"], f"this node's torch "
                                      f"{owner.torch.__version__} is built without CUDA: it "
                                      f"has no CUDA libraries to link a CUDA extension with", "")
        self.owner, self.spec, self.folder, self.lib = owner, spec, folder, lib
        self.torch_includes = _torch_paths(ext.include_paths, spec["with_cuda"])
        self.torch_libraries = _torch_paths(ext.library_paths, spec["with_cuda"])
        self.shims = {flavor: os.path.join(folder, f"kiln_{flavor}_include")
                      for flavor in ("cpp", "cuda", "cuda_bind")}
        self.race = (os.cpu_count() or 1) >= 4
        self.env = dict(os.environ, LC_ALL="C")  # diagnostics in plain ASCII, parsed below
        self.log = []
        self.started = time.monotonic()

    def elapsed(self):
        import time
        return time.monotonic() - self.started

    def run(self):
        import shutil
        spec = self.spec
        os.makedirs(self.folder, exist_ok=True)
        try:
            self._prepare()
            objects = self._compile()
            self._link(objects)
        except ExtensionBuildError as e:
            shutil.rmtree(self.folder, ignore_errors=True)
            e.log = "\n".join(self.log)
            # A solution may catch the failure (and fall back to torch); its workers then meet
            # the same call, and must fail it as this build failed, not as a call never made.
            os.makedirs(self.folder, exist_ok=True)
            with open(os.path.join(self.folder, "failed"), "w") as f:
                f.write(str(e).splitlines()[0] if str(e) else "the build failed")
            raise
        self._write_log()
        if spec["verbose"]:
            self.owner.notes.append("\n".join(self.log))
        for name in os.listdir(self.folder):
            if name.endswith((".o", ".o.log")):
                os.unlink(os.path.join(self.folder, name))
        with open(os.path.join(self.folder, "built"), "w") as f:
            f.write(f"{self.elapsed():.2f}\n")
        steps = "; ".join(line.split("]")[0].lstrip("[") for line in self.log
                          if line.startswith("[") and " s]" in line.split("\n")[0])
        self.owner.notes.append(f"kiln: {spec['what']} built in {self.elapsed():.1f} s ({steps})")

    def _write_log(self):
        with open(os.path.join(self.folder, "build.log"), "w") as f:
            f.write("\n".join(self.log))

    def _prepare(self):
        """Sources written, light headers in place, each unit's command around its source."""
        import sysconfig
        torch = self.owner.torch
        spec = self.spec
        light = light_extension_headers(self.torch_includes)
        for flavor, shim in self.shims.items():
            os.makedirs(os.path.join(shim, "torch"), exist_ok=True)
            with open(os.path.join(shim, "torch", "extension.h"), "w") as f:
                f.write(light[flavor])
        defines = [f"-DTORCH_EXTENSION_NAME={spec['name']}", "-DTORCH_API_INCLUDE_EXTENSION_H"]
        for attr, macro in (("_PYBIND11_COMPILER_TYPE", "PYBIND11_COMPILER_TYPE"),
                            ("_PYBIND11_STDLIB", "PYBIND11_STDLIB"),
                            ("_PYBIND11_BUILD_ABI", "PYBIND11_BUILD_ABI")):
            value = getattr(torch._C, attr, None)
            if value is not None:
                defines.append(f'-D{macro}="{value}"')
        user = [f"-I{os.path.abspath(p)}" for p in spec["include_paths"]]
        system = []
        for path in self.torch_includes + [sysconfig.get_paths()["include"]]:
            system += ["-isystem", path]
        abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
        common = defines + user
        tail = system + [f"-D_GLIBCXX_USE_CXX11_ABI={abi}"]
        for unit in spec["units"]:
            self._place(unit)
            unit["head"] = [self._compiler(unit)] + common
            unit["tail"] = tail + self._unit_flags(unit)

    @staticmethod
    def _object(unit):
        return os.path.splitext(unit["name"])[0] + (".cuda" if unit["cuda"] else "")

    def _place(self, unit):
        unit["object"] = self._object(unit)
        names = [self._object(u) for u in self.spec["units"]]
        if names.count(unit["object"]) > 1:  # two of load()'s sources share a file name
            unit["object"] += f".{self.spec['units'].index(unit)}"
        if unit["path"] is None:
            unit["path"] = os.path.join(self.folder, unit["name"])
            with open(unit["path"], "w") as f:
                f.write(unit["text"])
        unit["light_path"] = None
        if unit["light_text"] is not None:
            unit["light_path"] = unit["path"]
            if unit["light_text"] != unit["text"]:
                unit["light_path"] = os.path.join(self.folder, unit["object"] + ".light" +
                                                  os.path.splitext(unit["name"])[1])
                with open(unit["light_path"], "w") as f:
                    f.write(unit["light_text"])

    def _compiler(self, unit):
        return self.owner.nvcc if unit["cuda"] else os.environ.get("CXX", "c++")

    def _unit_flags(self, unit):
        """What torch passes after the includes, then the solution's flags, which win: torch
        puts -std=c++17 before them for c++ (the last -std counts) and for nvcc only when they
        name none (nvcc refuses some redefinitions); kiln's -O3 likewise (torch gives none)."""
        user = self.spec["cuda_cflags" if unit["cuda"] else "cflags"]
        optimize = [] if any(f.startswith("-O") for f in user) else ["-O3"]
        if not unit["cuda"]:
            return ["-fPIC", "-std=c++17"] + optimize + user
        std = [] if any(f.startswith("-std=") for f in user) else ["-std=c++17"]
        return self.NVCC_COMMON + self.owner.gencode + ["-Xcompiler", "-fPIC"] + optimize + \
            user + std

    def _start(self, unit, light):
        import subprocess
        out = unit["object"] + (".light.o" if light else ".o")
        shim = ["-I" + self.shims[self._flavor(unit)]] if light else []
        source = unit["light_path"] if light else unit["path"]
        if os.path.dirname(source) == self.folder:  # diagnostics name main.cpp, cuda.cu
            source = os.path.basename(source)
        cmd = unit["head"] + shim + unit["tail"] + ["-c", source, "-o", out]
        output = open(os.path.join(self.folder, out + ".log"), "w+")
        proc = subprocess.Popen(cmd, cwd=self.folder, stdout=output, stderr=subprocess.STDOUT,
                                env=self.env, start_new_session=True)
        return {"unit": unit, "light": light, "cmd": cmd, "out": out, "proc": proc,
                "output": output}

    @staticmethod
    def _flavor(unit):
        if not unit["cuda"]:
            return "cpp"
        return "cuda_bind" if "PYBIND11" in unit["text"] or "pybind11" in unit["text"] else "cuda"

    def _kind(self, job):
        if job["light"]:
            return "kiln's light <torch/extension.h>"
        return "torch's <torch/extension.h>" if job["unit"]["light_text"] is not None else \
            "as written"

    def _finished(self, job):
        job["output"].seek(0)
        text = job["output"].read()
        job["output"].close()
        what = "nvcc" if job["unit"]["cuda"] else "c++"
        self.log.append(f"[{what} {self.elapsed():.1f} s] ({self._kind(job)}) "
                        f"{' '.join(job['cmd'])}\n{text}")
        return text

    def _stop(self, jobs):
        for job in jobs:
            try:
                os.killpg(job["proc"].pid, 9)  # nvcc's cicc, ptxas and host compiler too
            except ProcessLookupError:
                pass
            job["proc"].wait()
            job["output"].close()
            self.log.append(f"[{job['unit']['name']}] {self._kind(job)} compile stopped: not "
                            f"needed")

    def _compile(self):
        """Every unit's compiles at once; the object of each unit, or ExtensionBuildError at the
        first unit that fails."""
        import time
        running = []
        for unit in self.spec["units"]:
            light = unit["light_path"] is not None
            if light:
                running.append(self._start(unit, True))
            if not light or self.race:
                running.append(self._start(unit, False))
        done = {}
        while running:
            finished = [job for job in running if job["proc"].poll() is not None]
            if not finished:
                time.sleep(0.02)
                continue
            for job in finished:
                running.remove(job)
                self._settle(job, running, done)
        return [done[unit["name"]] for unit in self.spec["units"]]

    def _settle(self, job, running, done):
        unit = job["unit"]
        output = self._finished(job)
        mine = [j for j in running if j["unit"] is unit]
        if job["proc"].returncode == 0:
            done[unit["name"]] = job["out"]
            self._stop(mine)
            for j in mine:
                running.remove(j)
            return
        if not job["light"] and mine:  # racing: the light compile may still build the unit
            unit["full_failure"] = output
            return
        if job["light"]:
            cure = self.full_header_cure(output, unit)
            if cure is None:
                self.log.append(f"[{unit['name']}] not compiled again with torch's "
                                f"<torch/extension.h>: its first error is the source's own, "
                                f"not a declaration the light header leaves out")
            else:
                self.log.append(f"[{unit['name']}] compiled with torch's <torch/extension.h>: "
                                f"the light header failed on {cure}")
                output = unit.get("full_failure", output)
                if "full_failure" not in unit:
                    if not mine:
                        running.append(self._start(unit, False))
                    return
        self._stop(running)
        running.clear()
        raise ExtensionBuildError(self.spec["what"], self._shown(_first_problem(output)), "")

    def _shown(self, line):
        """A diagnostic with the solution's files named from its package (load's sources)."""
        package = os.path.join(os.path.dirname(self.owner.root), PACKAGE) + os.sep
        return line.replace(package, "").replace(self.folder + os.sep, "")

    def full_header_cure(self, output, unit):
        """Why torch's own header may build what the light one could not (a phrase for the
        log), or None when the first error is the source's own."""
        first = _first_error(output)
        if first is None:
            return "no error line (the compiler stopped)"
        file, message, text = first
        path = os.path.realpath(os.path.join(self.folder, file))
        if path.startswith(self._header_roots()):
            return f"an error in a header ({text})"
        for pattern in _MISSING_DECLARATION:
            m = pattern.search(message)
            if m is None:
                continue
            name = (m.groupdict().get("n") or "").split("<")[0].split("::")[-1].strip(" ()&*")
            if not name:
                return text
            where = self._torch_mentions(name)
            return f"'{name}', which torch's headers declare ({where}): {text}" if where \
                else None
        return None

    def _header_roots(self):
        """Where torch's and kiln's headers are, as compilers name them: a distribution's torch
        include folder may hold links (its c10 folder a link into the system include folder)."""
        roots = set()
        for root in self.torch_includes + list(self.shims.values()):
            roots.add(os.path.realpath(root) + os.sep)
            for child in (os.listdir(root) if os.path.isdir(root) else []):
                roots.add(os.path.realpath(os.path.join(root, child)) + os.sep)
        return tuple(roots)

    def _torch_mentions(self, word):
        """A torch header (relative path) that has `word` as a whole word, or ""."""
        if word in self._mentions:
            return self._mentions[word]
        needle = word.encode()
        pattern = re.compile(rb"(?<![\w$])" + re.escape(needle) + rb"(?![\w$])")
        root = os.path.realpath(self.torch_includes[0])
        found, seen = "", set()
        for folder, dirs, files in os.walk(root, followlinks=True):
            real = os.path.realpath(folder)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            for name in files:
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if needle in data and pattern.search(data):
                    found = os.path.relpath(path, root)
                    break
            if found:
                break
        self._mentions[word] = found
        return found

    def _link(self, objects):
        import subprocess
        spec = self.spec
        libs = [f"-L{p}" for p in self.torch_libraries] + ["-lc10"]
        if spec["with_cuda"]:
            libs.append("-lc10_cuda")
        libs.append("-ltorch_cpu")
        if spec["with_cuda"]:
            libs.append("-ltorch_cuda")
        libs += ["-ltorch", "-ltorch_python"]
        if spec["with_cuda"]:
            toolkit = os.path.dirname(os.path.dirname(self.owner.nvcc))
            libs += [f"-L{os.path.join(toolkit, 'lib64')}", "-lcudart"]
        cmd = [os.environ.get("CXX", "c++")] + objects + ["-shared"] + spec["ldflags"] + libs + \
            ["-o", self.lib]
        r = subprocess.run(cmd, cwd=self.folder, capture_output=True, text=True, env=self.env)
        self.log.append(f"[link {self.elapsed():.1f} s] {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        if r.returncode != 0:
            raise ExtensionBuildError(spec["what"], self._shown(_first_problem(r.stdout +
                                                                              r.stderr)), "")

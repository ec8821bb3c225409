# deps.sh: installing what the kit needs on Debian and Ubuntu (sourced by ./lab).

pkg_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

cmd_deps() {
  local yes=0 missing=() optional=() plain=() norec=() sudo=() answer
  while (($# > 0)); do
    case $1 in
      -y|--yes) yes=1 ;;
      *) usage_error "deps: unknown argument '$1' (only --yes)" ;;
    esac
    shift
  done
  if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    die "deps knows Debian and Ubuntu only. Install by hand: a C17 compiler (gcc), make," \
      "CMake >= $CMAKE_MIN, OpenBLAS with cblas.h, cJSON (cjson/cJSON.h and libcjson)," \
      "libffi (ffi.h and libffi), MPI (Open MPI or MPICH, for lab 10)," \
      "and gnuplot (optional, for plots)."
  fi
  # A compiler and make: build-essential, or gcc and make already there.
  if ! pkg_installed build-essential && ! { pkg_installed gcc && pkg_installed make && pkg_installed libc6-dev; }; then
    missing+=(build-essential); plain+=(build-essential)
  fi
  pkg_installed cmake || { missing+=(cmake); plain+=(cmake); }
  # Ninja builds the kit: ./lab configures with it wherever it is installed
  # (make's own processes cost about as much again as its compilers here).
  pkg_installed ninja-build || command -v ninja >/dev/null 2>&1 || { missing+=(ninja-build); plain+=(ninja-build); }
  pkg_installed libopenblas-dev || { missing+=(libopenblas-dev); plain+=(libopenblas-dev); }
  # cJSON parses the headers of safetensors files (saved network parameters).
  pkg_installed libcjson-dev || { missing+=(libcjson-dev); plain+=(libcjson-dev); }
  # libffi: a simulated GPU calls the kernels whose threads meet at barriers through it.
  pkg_installed libffi-dev || { missing+=(libffi-dev); plain+=(libffi-dev); }
  # MPI for lab 10's ranks: Open MPI (labs/10_distributed/README.md, "Which MPI").
  # An MPICH already there serves as well: FindMPI takes either.
  if ! { pkg_installed openmpi-bin && pkg_installed libopenmpi-dev; } && ! pkg_installed libmpich-dev; then
    missing+=(openmpi-bin libopenmpi-dev); plain+=(openmpi-bin libopenmpi-dev)
  fi
  # Any gnuplot will do; the small one is gnuplot-nox, without its recommends.
  if ! pkg_installed gnuplot-nox && ! pkg_installed gnuplot-qt && ! pkg_installed gnuplot-x11 \
    && ! command -v gnuplot >/dev/null 2>&1; then
    missing+=(gnuplot-nox); norec+=(gnuplot-nox)
  fi
  pkg_installed pkg-config || pkg_installed pkgconf || optional+=(pkg-config)

  local cuda_line
  if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
    cuda_line="CUDA toolkit: found ($(command -v nvcc || echo /usr/local/cuda/bin/nvcc)): the build includes the backend for real NVIDIA GPUs."
  else
    cuda_line="CUDA toolkit: not installed, and lab deps does not install it. For a real NVIDIA GPU follow https://docs.nvidia.com/cuda/cuda-installation-guide-linux/ ; without it everything works on simulated GPUs (LABKIT_SIM_GPUS=2)."
  fi

  if ((${#missing[@]} == 0)); then
    say "nothing missing: compiler, make, cmake, OpenBLAS, cJSON, libffi, MPI and gnuplot are installed."
    say "$cuda_line"
    return 0
  fi
  # pkg-config is optional: it comes along when something else is installed anyway.
  plain+=("${optional[@]}")

  say "missing: ${missing[*]}${optional[*]:+ (and, optional: ${optional[*]})}"
  local cmds=("apt-get update")
  ((${#plain[@]} == 0)) || cmds+=("apt-get install -y ${plain[*]}")
  ((${#norec[@]} == 0)) || cmds+=("apt-get install -y --no-install-recommends ${norec[*]}")

  if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      local joined
      joined=$(printf ' && %s' "${cmds[@]}")
      warn "you are not root and sudo is not installed. Run this (it asks for root's password):"
      printf "  su -c '%s'\n" "${joined# && }" >&2
      warn "$cuda_line"
      exit 1
    fi
  fi
  say "it will run:"
  local c
  for c in "${cmds[@]}"; do printf '  %s%s\n' "${sudo[*]:+${sudo[*]} }" "$c"; done
  if ((!yes)) && [[ -t 0 ]]; then
    read -r -p "lab: go ahead? [Y/n] " answer || answer=n
    case $answer in
      ""|y|Y|yes|YES|Yes) ;;
      *) say "nothing installed."; exit 1 ;;
    esac
  fi
  # No debconf questions; through env because sudo resets the environment.
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
  "${apt[@]}" update
  ((${#plain[@]} == 0)) || "${apt[@]}" install -y "${plain[@]}"
  ((${#norec[@]} == 0)) || "${apt[@]}" install -y --no-install-recommends "${norec[@]}"
  say "installed: ${missing[*]}${optional[*]:+ ${optional[*]}}"
  if command -v cmake >/dev/null 2>&1; then
    local v
    v=$(cmake --version | head -n1 | awk '{print $3}')
    version_ge "${v%%-*}" "$CMAKE_MIN" || warn "but cmake $v is older than $CMAKE_MIN: get a newer one with 'pip install --user cmake' or from https://apt.kitware.com"
  fi
  say "$cuda_line"
}


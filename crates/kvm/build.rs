//! Builds the guest image (guest/*.S, guest/*.c) with the machine's gcc and binutils into a flat
//! binary loaded at IMAGE_ADDR; `src/guest/mod.rs` includes it with `include_bytes!`.
use std::path::PathBuf;
use std::process::Command;

fn run(cmd: &mut Command) {
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (gcc and binutils are needed to build the guest)"));
    assert!(status.success(), "guest build step failed: {cmd:?}");
}

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let g = PathBuf::from("guest");
    for f in ["layout.h", "ctl.h", "entry.S", "guest.c", "guest.ld"] {
        println!("cargo:rerun-if-changed=guest/{f}");
    }
    let cflags = [
        "-m64", "-ffreestanding", "-fno-pic", "-fno-pie", "-fno-stack-protector", "-nostdlib",
        "-mno-red-zone", "-mgeneral-regs-only", "-fno-asynchronous-unwind-tables", "-O2", "-Wall",
        "-Werror", "-fcf-protection=none", "-mcmodel=small", "-fno-builtin",
    ];
    run(Command::new("gcc").args(cflags).arg("-c").arg(g.join("entry.S")).arg("-o").arg(out.join("entry.o")));
    run(Command::new("gcc").args(cflags).arg("-c").arg(g.join("guest.c")).arg("-o").arg(out.join("guest.o")));
    run(Command::new("ld")
        .args(["-nostdlib", "-static", "--no-dynamic-linker", "-z", "max-page-size=4096", "-T"])
        .arg(g.join("guest.ld"))
        .arg(out.join("entry.o"))
        .arg(out.join("guest.o"))
        .arg("-o")
        .arg(out.join("guest.elf")));
    run(Command::new("objcopy").args(["-O", "binary"]).arg(out.join("guest.elf")).arg(out.join("guest.bin")));
}

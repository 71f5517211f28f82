# The image deploy/kube-scheduler/ runs: kube-scheduler v1.37.2 with
# wasched's components (kube/cmd/kube-scheduler). From the repository root:
#   docker build -f deploy/kube-scheduler.Dockerfile -t wasched-kube-scheduler:0.1.0 .
# The Go package kube/wasm links target/debug/libwasched_ffi.a; the image
# links the release build of the same library in its place.
FROM rust:1.95.0-bookworm AS rust
WORKDIR /src
COPY . .
RUN rustup target add wasm32-wasip2 \
 && cargo build --release --locked -p wasched-ffi \
 && mkdir -p target/debug && cp target/release/libwasched_ffi.a target/debug/

FROM golang:1.26.8-bookworm AS go
WORKDIR /src
COPY --from=rust /src /src
RUN cd kube && go build -ldflags='-s -w' -o /kube-scheduler ./cmd/kube-scheduler

FROM debian:12.12-slim
RUN useradd --uid 65532 --no-create-home --shell /usr/sbin/nologin kube-scheduler
COPY --from=go /kube-scheduler /usr/local/bin/kube-scheduler
USER 65532
ENTRYPOINT ["/usr/local/bin/kube-scheduler"]

# exactav and stepctl on Debian 12, built with the project's own
# scripts/install-deps (docs/packaging.md):
#   docker build -t registry.example/exactav:0.1.0 .
# the image docs/examples/canary-statefulset.yaml runs.  Two stages: the
# build stage installs the build packages and installs the programs into
# /out (cmake --install, DESTDIR); the image has only the libraries they load
# (scripts/install-deps --runtime) and the installed tree.

FROM debian:12 AS build
WORKDIR /src
COPY scripts/install-deps scripts/install-deps
RUN scripts/install-deps && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release \
 && cmake --build /build -j"$(nproc)" --target exactav stepctl \
 && DESTDIR=/out cmake --install /build --prefix /usr/local

FROM debian:12-slim
COPY scripts/install-deps /usr/local/lib/exactav/install-deps
RUN /usr/local/lib/exactav/install-deps --runtime && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ /
# The same users as the systemd units' sysusers.d files, with fixed ids so
# that a volume's ownership (the StatefulSet's fsGroup) can name them.
RUN groupadd --system --gid 10001 exactav \
 && useradd --system --uid 10001 --gid exactav --home-dir /var/lib/exactav --shell /usr/sbin/nologin exactav \
 && groupadd --system --gid 10002 stepctl \
 && useradd --system --uid 10002 --gid stepctl --home-dir /var/lib/stepctl --shell /usr/sbin/nologin stepctl \
 && install -d -o exactav -g exactav /var/lib/exactav \
 && install -d -o stepctl -g stepctl /var/lib/stepctl
USER exactav
WORKDIR /var/lib/exactav
# exactav canary --metrics-listen 0.0.0.0:9464 (the StatefulSet's port)
EXPOSE 9464
CMD ["exactav", "--help"]

# The todoflow worker as an image, for docker-compose.yml and clusters.
# Build: docker build -t todoflow-worker .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/worker ./worker

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/todoflow --create-home todoflow
COPY --from=build /out/worker /usr/local/bin/worker
USER todoflow
# Workspaces and file reports live here; mount a volume to keep them.
ENV TODOFLOW_STATE_DIR=/var/lib/todoflow
ENTRYPOINT ["/usr/local/bin/worker"]

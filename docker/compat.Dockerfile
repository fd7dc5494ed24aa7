# Client image for compose.compat.yml: the third-party clients of compat/ (kcat, kafka-python,
# kafkajs), run against a broker with `compat/run --bootstrap broker:9092`.
FROM debian:bookworm-slim
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends kcat python3 python3-venv nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY compat compat
ENTRYPOINT ["compat/run", "--bootstrap", "broker:9092"]

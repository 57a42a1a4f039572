// swift-tools-version:6.1
// The engine's micro-benchmarks (ordo-one/package-benchmark), kept in a package of their own so that the main
// package builds without the benchmark harness. Run: `cd Benchmarks && swift package benchmark`.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder: the checkout's folder name, whatever the clone was called.
let engine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "FaultlineBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.29.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "Faultline", package: engine),
                .product(name: "FaultlineBench", package: engine),
                .product(name: "FaultlineReport", package: engine),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

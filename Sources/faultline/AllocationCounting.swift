import CMallocCounter
import FaultlineBench

/// The executable's allocation counter (CMallocCounter defines malloc here), for `bench`'s memory runs; nil under a
/// sanitizer, which interposes malloc itself.
enum AllocationCounting {
    static var counter: AllocationCounter? {
        guard fl_allocations_counted() else { return nil }
        return AllocationCounter(start: { fl_allocation_counting(true) }, stop: { fl_allocation_counting(false) }, read: {
            let totals = fl_allocation_read()
            return (Int(clamping: totals.allocations), Int(clamping: totals.bytes), Int(totals.net))
        })
    }
}

// F# lock corpus: `lock` (FSharp.Core's inline Monitor.Enter/Exit) in functions, a class, closures and seq.
module LockCorpusFs.Program

open System
open System.Runtime.CompilerServices
open System.Threading

let gate = obj ()
let mutable counter = 0

/// A plain function taking the lock.
let increment n =
    lock gate (fun () -> counter <- counter + n)

/// A lock whose body returns a value.
let read () = lock gate (fun () -> counter)

/// The lock sits right before a call in tail position (tail. callvirt in Release builds).
let lockedApply (f: int -> int) x =
    let v = lock gate (fun () -> x + 1)
    f v

/// A class with a private lock object and a member that locks it.
type Account() =
    let sync = obj ()
    let mutable balance = 0
    member _.Deposit amount = lock sync (fun () -> balance <- balance + amount)
    member _.Balance = lock sync (fun () -> balance)

/// [<MethodImpl(Synchronized)>] members: the runtime locks `this`; Add ends in a call in tail
/// position (tail. in Release builds), which cannot stay a tail call inside the timing try block.
type Ledger() =
    let mutable total = 0
    member _.Describe(v: int) = sprintf "ledger %d" v
    [<MethodImpl(MethodImplOptions.Synchronized)>]
    member this.Add(x: int) =
        total <- total + x
        this.Describe total

/// A closure that captures a lock object and a counter.
let makeCounter () =
    let local = obj ()
    let mutable total = 0
    fun step -> lock local (fun () -> total <- total + step; total)

/// A lock around each element of a seq expression.
let lockedSeq n =
    seq {
        for i in 1..n do
            yield lock gate (fun () -> i * i)
    }

/// Explicit Monitor calls, as F# code sometimes writes them.
let explicitMonitor () =
    let mutable taken = false
    Monitor.Enter(gate, &taken)
    try counter + 1000 finally if taken then Monitor.Exit gate

/// An exception thrown inside the lock, caught outside.
let throwInside () =
    try
        lock gate (fun () -> failwith "thrown inside lock")
    with e -> sprintf "caught '%s' free %b" e.Message (not (Monitor.IsEntered gate))

[<EntryPoint>]
let main _ =
    increment 2
    increment 3
    printfn "fsharp: counter %d" (read ())
    printfn "fsharp: tail %d" (lockedApply (fun v -> v * 10) 4)
    let acct = Account()
    acct.Deposit 30
    acct.Deposit 12
    printfn "fsharp: account %d" acct.Balance
    let ledger = Ledger()
    ledger.Add 5 |> ignore
    printfn "fsharp: synchronized %s" (ledger.Add 6)
    let next = makeCounter ()
    next 5 |> ignore
    printfn "fsharp: closure %d" (next 7)
    printfn "fsharp: seq %s" (lockedSeq 4 |> Seq.map string |> String.concat ",")
    printfn "fsharp: monitor %d" (explicitMonitor ())
    printfn "fsharp: %s" (throwInside ())
    printfn "fsharp: done"
    0

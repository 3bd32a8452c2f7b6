// An F# lock held 30 ms.
open System.Threading

let gate = obj ()

[<EntryPoint>]
let main _ =
    lock gate (fun () -> Thread.Sleep 30)
    printfn "done"
    0
